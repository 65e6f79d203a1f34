"""rebuild_range with workers builds the days of one 7-day block side by side,
each merging the block from its days: the week's lock makes each wait for
the other's commit, so the block ends as the merge of all its hours."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probes.models import RegionRollup
from probes.rollups import DAY, rebuild_range
from probes.rollups.periods import block_start
from tests.region_rollups.rows import fill
from tests.region_rollups.test_a_region_block_is_the_merge_of_its_hourly_rollups import assert_merges, blocks

pytestmark = pytest.mark.django_db(transaction=True)
WEEK = 7 * DAY


def test_a_week_built_two_days_at_a_time_is_the_merge_of_its_hours(probes, regions):
    week = block_start(datetime.now(UTC) - 2 * DAY, WEEK) - WEEK
    fill(probes, week, 7 * 24, per_hour=1)
    rebuild_range(week, week + WEEK, workers=2)
    found = blocks()
    assert_merges(found)
    week_rows = RegionRollup.objects.filter(span_hours=168, start=week)
    assert sum(week_rows.values_list("samples", flat=True)) == sum(
        row["samples"] for (_, span, start), row in found.items() if span == 1 and week <= start < week + WEEK
    )
