"""Rows written before their day had a partition (a test's bulk_create, hand SQL) are kept by the default
partition; creating the day's partition later moves them there, ids and all, in the same transaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes import partitions
from probes.models import Measurement
from tests.factories import MeasurementFactory
from tests.partitions.conftest import partition_of


@pytest.mark.django_db
def test_the_days_rows_move_and_the_others_stay(make_probe, make_region):
    region = make_region()
    probe = make_probe(regions=[region])
    day = datetime.now(UTC).replace(hour=6, minute=0, second=0, microsecond=0) - timedelta(days=15)
    rows = Measurement.objects.bulk_create(
        [MeasurementFactory.build(probe=probe, region=region, scheduled_for=day + timedelta(hours=h)) for h in range(3)]
        + [MeasurementFactory.build(probe=probe, region=region, scheduled_for=day + timedelta(days=1))]
    )
    default = partitions.MEASUREMENTS.default_name
    assert {partition_of("probes_measurement", row.id) for row in rows} == {default}

    assert partitions.ensure_days(partitions.MEASUREMENTS, [day.date()]) == [day.date()]

    name = partitions.MEASUREMENTS.day_name(day.date())
    assert [partition_of("probes_measurement", row.id) for row in rows] == [name, name, name, default]
    assert Measurement.objects.count() == 4
    assert partitions.ensure_days(partitions.MEASUREMENTS, [day.date()]) == []
