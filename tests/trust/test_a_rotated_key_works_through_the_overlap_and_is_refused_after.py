"""Rotation: a new credential works at once; the old one keeps working
through the overlap (hosts are moved over without a gap) and is refused
after it, with the moment it was retired. The clock is moved, not slept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine

from probes.fleet.keys import issue_key
from probes.models import DeadLetter, Measurement
from tests.factories import region_credential, sealed_results
from tests.trust.conftest import ingest


def test_both_keys_work_within_the_overlap_and_only_the_new_one_after_it(region, payloads):
    rotated = datetime.now(UTC)
    with time_machine.travel(rotated, tick=False):
        old = region_credential(region)
        new = region_credential(region, overlap=timedelta(hours=2))
        assert ingest(sealed_results(region, payloads(1, start=0), old)) == 1
        assert ingest(sealed_results(region, payloads(1, start=1), new)) == 1

    with time_machine.travel(rotated + timedelta(hours=1, minutes=59), tick=False):
        assert ingest(sealed_results(region, payloads(1, start=2), old)) == 1
        assert ingest(sealed_results(region, payloads(1, start=3), new)) == 1

    with time_machine.travel(rotated + timedelta(hours=2, seconds=1), tick=False):
        assert ingest(sealed_results(region, payloads(1, start=4), old)) == 0
        assert ingest(sealed_results(region, payloads(1, start=5), new)) == 1

    assert Measurement.objects.count() == 5
    letter = DeadLetter.objects.get()
    ends = rotated + timedelta(hours=2)
    assert letter.reason == (
        f"key {old.key_id} of region {region.slug} was retired at {ends:%Y-%m-%d %H:%M:%S} UTC: "
        "install the region's current credential"
    )


def test_a_key_retired_now_is_refused_by_the_very_next_batch(region, payloads):
    old = region_credential(region)
    assert ingest(sealed_results(region, payloads(1), old)) == 1
    issue_key(region, overlap=timedelta(0))  # no cache of keys stands in the way
    assert ingest(sealed_results(region, payloads(1, start=1), old)) == 0
    assert "was retired at" in DeadLetter.objects.get().reason
