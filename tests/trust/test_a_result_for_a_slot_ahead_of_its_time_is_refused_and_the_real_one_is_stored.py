"""A region's key holder cannot fill its region's slots ahead of time: a result signed with the region's real
credential for a slot later than now plus the probe's interval and SLOT_AHEAD_GRACE is a dead letter with the
reason, and the real result for that slot, when its time comes, is stored. (Before, such a result was stored up
to a day ahead, and the real one was ignored by the insert-or-ignore on the slot key.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from probes.models import DeadLetter, Measurement
from probes.slot_time import SLOT_AHEAD_GRACE
from tests.factories import measurement_payload, region_credential, sealed_results
from tests.trust.conftest import ingest

pytestmark = pytest.mark.django_db(transaction=True)

INTERVAL = 60


def test_a_slot_ahead_of_its_time_is_a_dead_letter_and_the_real_result_for_it_is_stored(make_probe):
    probe = make_probe(interval_seconds=INTERVAL, timeout_seconds=10)
    region = probe.regions.get()
    credential = region_credential(region)
    now = datetime.now(UTC).replace(microsecond=0)
    beyond = now + timedelta(seconds=INTERVAL) + SLOT_AHEAD_GRACE + timedelta(minutes=1)
    tomorrow = now + timedelta(hours=23)
    # The next slots, and any within the grace (the scheduler's lead, a central clock a little ahead), are taken.
    within = now + timedelta(seconds=INTERVAL) + SLOT_AHEAD_GRACE - timedelta(minutes=1)

    forged = [measurement_payload(probe, region, when, ttft_ms=1.0) for when in (beyond, tomorrow)]
    assert ingest(sealed_results(region, [*forged, measurement_payload(probe, region, within)], credential)) == 1

    assert list(Measurement.objects.values_list("scheduled_for", flat=True)) == [within]
    letters = DeadLetter.objects.order_by("payload_index")
    assert [letter.payload for letter in letters] == forged
    assert all("ahead of its time" in letter.reason and f"({INTERVAL} s)" in letter.reason for letter in letters)
    assert {(letter.probe_id, letter.region_id) for letter in letters} == {(probe.id, region.id)}

    # The slot's time comes; its real result (another message, the same credential) is stored.
    with time_machine.travel(beyond + timedelta(seconds=3), tick=False):
        real = measurement_payload(probe, region, beyond, ttft_ms=321.5)
        assert ingest(sealed_results(region, [real], credential)) == 1
    stored = Measurement.objects.get(scheduled_for=beyond)
    assert stored.ttft_ms == 321.5
    assert not Measurement.objects.filter(scheduled_for=tomorrow).exists()
