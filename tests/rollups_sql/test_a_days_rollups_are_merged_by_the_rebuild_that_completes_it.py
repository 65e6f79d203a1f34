"""A day's DailyRollup rows are read only while all 24 of its hours are marked, so only the rebuild that leaves
the day so merges them: not the rebuild of each ended hour before the day's last, nor the current hour's, which
the schedule repeats every few minutes all day."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from probes.models import DailyRollup, HourlyRollup, RollupHour
from probes.rollups import DAY, HOUR, floor_day, floor_hour, rebuild_day, rebuild_hour
from tests.rollups_sql.test_a_whole_days_daily_rollups_counted_from_raw_rows_equal_the_merge_of_its_hours import (
    daily_rows,
)
from tests.rollups_sql.test_hourly_rollups_built_in_sql_equal_the_python_builders import fill

pytestmark = pytest.mark.django_db


def test_only_the_rebuild_of_a_days_last_unmarked_hour_merges_its_daily_rows(make_probe, make_region):
    regions = [make_region(), make_region()]
    probes = [make_probe(regions=regions)]
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, regions, [day + HOUR * h for h in range(24)], random.Random(3), per_hour=6)

    for h in (*range(12), *range(13, 24)):
        rebuild_hour(day + HOUR * h)
    assert RollupHour.objects.filter(hour__gte=day, hour__lt=day + DAY).count() == 23
    assert not DailyRollup.objects.filter(day=day).exists()

    rebuild_hour(day + 12 * HOUR)
    assert RollupHour.objects.filter(hour__gte=day, hour__lt=day + DAY).count() == 24
    merged = daily_rows(day)
    assert len(merged) == 2
    hourly = HourlyRollup.objects.filter(hour__gte=day, hour__lt=day + DAY)
    assert sum(row["samples"] for row in merged.values()) == sum(h.samples for h in hourly) == 2 * 24 * 6
    # What the merge of its hours writes, whoever calls it.
    rebuild_day(day)
    assert daily_rows(day) == merged


def test_the_current_hours_rebuild_merges_no_daily_rows_for_its_day(make_probe, make_region):
    regions = [make_region()]
    probes = [make_probe(regions=regions)]
    hour = floor_hour(datetime.now(UTC))
    fill(probes, regions, [hour], random.Random(6), per_hour=3)

    assert rebuild_hour(hour) == 1

    assert HourlyRollup.objects.get(hour=hour).samples == 3
    assert not RollupHour.objects.filter(hour=hour).exists()
    assert not DailyRollup.objects.filter(day=floor_day(hour)).exists()
    # Merged on demand all the same (rebuild_day merges whatever hours a day has).
    assert rebuild_day(floor_day(hour)) == 1
