"""A run whose start breaks the slot rule (probes.slot_time: a worker's clock too far ahead, or a run started long
after its slot) is refused by ingest as a dead letter with the reason; the rest of its batch is stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import store
from probes.models import DeadLetter, Measurement
from tests.factories import measurement_payload


@pytest.mark.django_db
@pytest.mark.parametrize("skew", [timedelta(minutes=-6), timedelta(hours=1, seconds=1)])
def test_the_skewed_row_is_a_dead_letter_and_its_neighbour_is_stored(make_probe, make_region, skew):
    region = make_region()
    probe = make_probe(regions=[region])
    slot = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)
    skewed = measurement_payload(probe, region, slot, started_at=(slot + skew).isoformat())
    fine = measurement_payload(probe, region, slot + timedelta(minutes=1))

    store([skewed, fine])

    assert list(Measurement.objects.values_list("scheduled_for", flat=True)) == [slot + timedelta(minutes=1)]
    letter = DeadLetter.objects.get()
    assert letter.payload == skewed
    assert f"is not within 0:05:00 before to 1:00:00 after its slot {slot.isoformat()}" in letter.reason


@pytest.mark.django_db
def test_the_edges_of_the_rule_are_stored(make_probe, make_region):
    region = make_region()
    probe = make_probe(regions=[region])
    slot = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)
    store(
        [
            measurement_payload(probe, region, slot, started_at=(slot - timedelta(minutes=5)).isoformat()),
            measurement_payload(
                probe,
                region,
                slot + timedelta(minutes=1),
                started_at=(slot + timedelta(hours=1, minutes=1)).isoformat(),
            ),
        ]
    )
    assert Measurement.objects.count() == 2 and not DeadLetter.objects.exists()
