"""A whole day's rebuild counts the day's DailyRollup rows from the raw rows
in the statement that builds its hours; they must be exactly what merging its
hourly rows (rebuild_day) writes: on random, edge and NULL values, with a
probe re-pointed at other targets during the day, and when an hour whose raw
rows are gone keeps rollups the statement did not write."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from probes.metrics import HISTOGRAM
from probes.models import DailyRollup, HourlyRollup, Measurement
from probes.rollups import DAY, HOUR, floor_day, rebuild_day, rebuild_range
from tests.rollups_sql.test_hourly_rollups_built_in_sql_equal_the_python_builders import fill

pytestmark = pytest.mark.django_db

FIELDS = ("target_id", "samples", "errors", "outcomes", *(m.rollup_field for m in HISTOGRAM))


def daily_rows(day: datetime) -> dict:
    return {
        (row["probe_id"], row["region_id"]): {f: row[f] for f in FIELDS}
        for row in DailyRollup.objects.filter(day=day).values("probe_id", "region_id", *FIELDS)
    }


def test_a_rebuilt_days_rows_equal_the_merge_of_its_hours(make_probe, make_region, make_target):
    regions = [make_region(), make_region()]
    probes = [make_probe(regions=regions), make_probe(regions=regions)]
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, regions, [day, day + 7 * HOUR, day + 8 * HOUR, day + 23 * HOUR], random.Random(5), per_hour=30)
    # Re-pointed twice: within hour 7 and again from hour 8 on, so the
    # day's target is the latest row's, not the hour's of the first row.
    moved = probes[0]
    first, second = make_target(), make_target()
    Measurement.objects.filter(probe=moved, started_at__gte=day + 7 * HOUR + HOUR / 2).update(target=first)
    Measurement.objects.filter(probe=moved, started_at__gte=day + 8 * HOUR, started_at__lt=day + DAY).update(
        target=second
    )

    rebuild_range(day, day + DAY)
    counted = daily_rows(day)
    rebuild_day(day)
    merged = daily_rows(day)

    assert counted == merged
    assert len(merged) == 4
    assert {v["target_id"] for (p, _), v in merged.items() if p == moved.id} == {second.id}
    hourly = HourlyRollup.objects.filter(hour__gte=day, hour__lt=day + DAY)
    assert sum(v["samples"] for v in merged.values()) == sum(h.samples for h in hourly)


def test_an_hour_whose_raw_rows_are_gone_keeps_its_rollups_in_the_days_rows(make_probe, make_region):
    regions = [make_region()]
    probes = [make_probe(regions=regions)]
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, regions, [day + 2 * HOUR, day + 5 * HOUR], random.Random(9), per_hour=20)
    rebuild_range(day, day + DAY)
    kept = HourlyRollup.objects.get(hour=day + 2 * HOUR)
    Measurement.objects.filter(started_at__gte=day + 2 * HOUR, started_at__lt=day + 3 * HOUR).delete()

    rebuild_range(day, day + DAY)
    after = daily_rows(day)
    rebuild_day(day)

    assert HourlyRollup.objects.filter(hour=day + 2 * HOUR).get().ttft_hist == kept.ttft_hist
    assert after == daily_rows(day)
    hourly = HourlyRollup.objects.filter(hour__gte=day, hour__lt=day + DAY)
    ((_, row),) = after.items()
    assert row["samples"] == sum(h.samples for h in hourly) > kept.samples
