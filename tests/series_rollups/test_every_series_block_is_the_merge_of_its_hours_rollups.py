"""Every series rollup block of days holds the merge of its probe's hourly
rollups in its region, for its target, over its hours (merged from the 12 h
blocks inside it), and is marked exactly when all its hours are: after a range
rebuild (one closing pass), after days built side by side, after a rebuild of
one day; and never while a 12 h block it is merged from is missing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probes.models import HourlyRollup, RollupHour, SeriesBlockMark, SeriesRollup
from probes.rollups import DAY, HOUR, build, rebuild_range
from probes.rollups.periods import SERIES_GRAINS, block_start
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import assert_blocks_merge_their_hours, blocks, marks

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


def test_a_range_rebuild_leaves_every_block_the_merge_of_its_hours(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    # From the second day of the block to two days past it: the first day
    # has no rows and stays unmarked, so the blocks holding it stay unread.
    fill(probes, start + DAY, 17 * 24, per_hour=1)
    rebuild_range(start + DAY, start + 18 * DAY)
    found = blocks()
    assert {span for *_, span, _ in found} == set(SERIES_GRAINS)
    assert_blocks_merge_their_hours(found)
    assert_marked_where_complete(start, start + 18 * DAY)
    assert (SERIES_GRAINS[-1], start) not in marks()
    assert (48, start + 2 * DAY) in marks()


def test_rebuilding_one_day_builds_and_marks_the_blocks_holding_it(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    fill(probes, start, 16 * 24, per_hour=1)
    rebuild_range(start, start + 16 * DAY)
    before, marked = blocks(), marks()
    assert (SERIES_GRAINS[-1], start) in marked
    # The blocks of days from day 5 on (the 12 h blocks they are merged from stay).
    SeriesRollup.objects.filter(start__gte=start + 5 * DAY, span_hours__in=SERIES_GRAINS).delete()
    SeriesBlockMark.objects.filter(start__gte=start + 5 * DAY, span_hours__in=SERIES_GRAINS).delete()

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
    build._build(start + 3 * DAY, start + 4 * DAY, closing=True)
    assert not {(g, s) for g, s in marks() if s <= start + 3 * DAY < s + HOUR * g}

    # Rebuilding another day of the 16-day block rebuilds those too.
    rebuild_range(start + 9 * DAY, start + 10 * DAY)
    found = blocks()
    assert_blocks_merge_their_hours(found)
    assert_marked_where_complete(start, start + 16 * DAY)
    sixteen = sum(row["samples"] for key, row in found.items() if key[3] == SERIES_GRAINS[-1])
    assert sixteen == sum(HourlyRollup.objects.values_list("samples", flat=True))


def test_a_block_over_a_missing_12_hour_block_is_left_unmarked_until_that_block_is_built(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    fill(probes, start, 16 * 24, per_hour=1)
    rebuild_range(start, start + 16 * DAY)
    assert (SERIES_GRAINS[-1], start) in marks()
    # Day 5's morning as hours marked before the blocks inside a day existed: no 12 h block, no mark.
    morning = start + 5 * DAY
    SeriesRollup.objects.filter(span_hours=12, start=morning).delete()
    SeriesBlockMark.objects.filter(span_hours=12, start=morning).delete()

    # Another day's rebuild merges every unmarked block of the 16-day block again, those over day 5 among them
    # (unmarked by a rebuild of day 5's evening), but they lack day 5's morning: none of them is marked.
    build._build(morning + 12 * HOUR, morning + DAY)
    rebuild_range(start + 9 * DAY, start + 10 * DAY)
    over_morning = {(g, block_start(morning, HOUR * g)) for g in SERIES_GRAINS}
    assert not over_morning & marks()
    assert (48, start + 8 * DAY) in marks()

    # Once the morning's hours are rebuilt, their 12 h block is built and every block over it is marked again.
    rebuild_range(morning, morning + 12 * HOUR)
    assert over_morning <= marks()
    assert_blocks_merge_their_hours(blocks())
    assert_marked_where_complete(start, start + 16 * DAY)


@pytest.mark.django_db(transaction=True)
def test_days_and_blocks_built_side_by_side_leave_the_same_blocks(probes, regions):
    start = a_sixteen_day_block_in_the_past()
    # Sixteen days across two 16-day blocks, so the closing pass builds two
    # at once as well.
    fill(probes, start + 8 * DAY, 16 * 24, per_hour=1)
    rebuild_range(start + 8 * DAY, start + 24 * DAY, workers=2)
    found = blocks()
    assert_blocks_merge_their_hours(found)
    assert_marked_where_complete(start, start + 32 * DAY)
    assert {(192, start + 8 * DAY), (192, start + 16 * DAY)} <= marks()
    eight = SeriesRollup.objects.filter(span_hours=192, start__in=[start + 8 * DAY, start + 16 * DAY])
    assert sum(eight.values_list("samples", flat=True)) == sum(HourlyRollup.objects.values_list("samples", flat=True))
