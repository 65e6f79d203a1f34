"""A row whose slot day has no partition yet (a late row, a day the scheduler did not make) gets its day's
partition from ingest, and lands there rather than in the default partition."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes import partitions
from probes.ingest import store
from probes.models import Measurement
from tests.factories import measurement_payload
from tests.partitions.conftest import partition_of


@pytest.mark.django_db
def test_the_late_row_is_in_its_days_partition(make_probe, make_region):
    region = make_region()
    probe = make_probe(regions=[region])
    slot = datetime.now(UTC).replace(microsecond=0) - timedelta(days=12)
    assert slot.date() not in partitions.existing_days(partitions.MEASUREMENTS)

    stored = store([measurement_payload(probe, region, slot)])

    assert len(stored) == 1
    assert slot.date() in partitions.existing_days(partitions.MEASUREMENTS)
    row = Measurement.objects.get()
    assert partition_of("probes_measurement", row.id) == partitions.MEASUREMENTS.day_name(slot.date())
