"""Every series rollup block holds the merge of its probe's daily rollups in
its region, for its target, over its days, and is marked exactly when all its
hours are: after a range rebuild (one closing pass), after days built side by
side, after a rebuild of one day, and after the migration's backfill."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.db import connection

from probes.models import DailyRollup, RollupHour, SeriesBlockMark, SeriesRollup
from probes.rollups import DAY, HOUR, build, rebuild_range
from probes.rollups.periods import SERIES_GRAINS, block_start
from tests.jsonb_histograms import histograms_as_jsonb
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import assert_blocks_merge_their_days, blocks, marks

backfill_migration = importlib.import_module("probes.migrations.0022_series_rollups")
SIXTEEN_DAYS = HOUR * SERIES_GRAINS[-1]


def a_sixteen_day_block_in_the_past() -> datetime:
    return block_start(datetime.now(UTC) - 20 * DAY, SIXTEEN_DAYS) - SIXTEEN_DAYS


def fully_marked(span: int, start: datetime) -> bool:
    return RollupHour.objects.filter(hour__gte=start, hour__lt=start + HOUR * span).count() == span


def assert_marked_where_complete(since: datetime, until: datetime) -> None:
    found = marks()
    for grain in SERIES_GRAINS:
        start = block_start(since, HOUR * grain)
        while start < until:
            assert ((grain, start) in found) == fully_marked(grain, start), (grain, start)
            start += HOUR * grain


def test_a_range_rebuild_leaves_every_block_the_merge_of_its_days(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    # From the second day of the block to two days past it: the first day
    # has no rows and stays unmarked, so the blocks holding it stay unread.
    fill(probes, start + DAY, 17 * 24, per_hour=1)
    rebuild_range(start + DAY, start + 18 * DAY)
    found = blocks()
    assert {span for *_, span, _ in found} == set(SERIES_GRAINS)
    assert_blocks_merge_their_days(found)
    assert_marked_where_complete(start, start + 18 * DAY)
    assert (SERIES_GRAINS[-1], start) not in marks()
    assert (48, start + 2 * DAY) in marks()


def test_rebuilding_one_day_builds_and_marks_the_blocks_holding_it(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    fill(probes, start, 16 * 24, per_hour=1)
    rebuild_range(start, start + 16 * DAY)
    before, marked = blocks(), marks()
    assert (SERIES_GRAINS[-1], start) in marked
    SeriesRollup.objects.filter(start__gte=start + 5 * DAY).delete()
    SeriesBlockMark.objects.filter(start__gte=start + 5 * DAY).delete()

    # The blocks holding the day, and with them every unmarked one of its
    # 16-day block, which a coarser block is merged from.
    rebuild_range(start + 5 * DAY, start + 6 * DAY)
    assert marks() == marked
    assert blocks() == before


def test_a_range_rebuild_stopped_before_its_closing_pass_is_mended_by_the_next_rebuild(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    fill(probes, start, 16 * 24, per_hour=1)
    rebuild_range(start, start + 16 * DAY)
    # One more row on day 3, rebuilt as a range rebuild rebuilds a day (its
    # blocks left to the closing pass), and the closing pass never run.
    fill(probes[:1], start + 3 * DAY + 5 * HOUR, 1, per_hour=1, seed=9)
    build._build(start + 3 * DAY, start + 4 * DAY, daily=True, series_blocks_too=False)
    assert not {(g, s) for g, s in marks() if s <= start + 3 * DAY < s + HOUR * g}

    # Rebuilding another day of the 16-day block rebuilds those too.
    rebuild_range(start + 9 * DAY, start + 10 * DAY)
    found = blocks()
    assert_blocks_merge_their_days(found)
    assert_marked_where_complete(start, start + 16 * DAY)
    sixteen = sum(row["samples"] for key, row in found.items() if key[3] == SERIES_GRAINS[-1])
    assert sixteen == sum(DailyRollup.objects.values_list("samples", flat=True))


def test_the_migration_backfill_builds_the_same_blocks_and_marks_as_rebuilding(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    fill(probes, start + 3 * DAY - 5 * HOUR, 6 * 24, per_hour=2)
    rebuild_range(start, start + 16 * DAY)
    rebuilt, marked = blocks(), marks()
    assert marked, "nothing marked: the comparison would prove nothing"
    SeriesRollup.objects.all().delete()
    SeriesBlockMark.objects.all().delete()
    # At the schema it was written for, then converted as an installation's rows are.
    with histograms_as_jsonb():
        backfill_migration.backfill(None, SimpleNamespace(connection=connection))
    assert blocks() == rebuilt
    assert marks() == marked


@pytest.mark.django_db(transaction=True)
def test_days_and_blocks_built_side_by_side_leave_the_same_blocks(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    # Sixteen days across two 16-day blocks, so the closing pass builds two
    # at once as well.
    fill(probes, start + 8 * DAY, 16 * 24, per_hour=1)
    rebuild_range(start + 8 * DAY, start + 24 * DAY, workers=2)
    found = blocks()
    assert_blocks_merge_their_days(found)
    assert_marked_where_complete(start, start + 32 * DAY)
    assert {(192, start + 8 * DAY), (192, start + 16 * DAY)} <= marks()
    eight = SeriesRollup.objects.filter(span_hours=192, start__in=[start + 8 * DAY, start + 16 * DAY])
    assert sum(eight.values_list("samples", flat=True)) == sum(DailyRollup.objects.values_list("samples", flat=True))
