"""A reading of every target grouped by region comes from region rollups
(the ladder of 1 h to 7 d blocks), and it equals the reading of the same
targets named one by one, which merges every probe's hourly rollups and
series blocks: for every metric, over windows with partial edge hours, with an
unmarked hour, a re-pointed probe, a late row and pruned blocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.engine.result import Measurement as EngineResult
from probes.ingest import store
from probes.models import RegionRollup, RollupHour
from probes.readings.cache import merge_cache
from probes.readings.plan import coverage, ladder_tiles
from probes.rollups import DAY, HOUR, floor_day, prune_raw, rebuild_hour, rebuild_range
from probes.rollups.periods import block_start
from tests.region_rollups.rows import assert_same, fill, read_both

WEEK = 7 * DAY


@pytest.fixture
def week():
    """A whole 7-day block of the ladder, ended at least two days ago."""
    return block_start(datetime.now(UTC) - 2 * DAY, WEEK) - WEEK


def spans_used(since, until) -> set[int]:
    return {span for span, _ in ladder_tiles(since, until, coverage(since, until).covered_hours)}


def test_a_window_with_partial_edge_hours_reads_the_same_from_region_rollups(probes, regions, week):
    fill(probes, week - 5 * HOUR, 7 * 24 + 10)
    rebuild_range(week - DAY, week + WEEK + DAY)
    since, until = week - 3 * HOUR - timedelta(minutes=17), week + WEEK + 4 * HOUR + timedelta(minutes=41)
    assert spans_used(since, until) == {168, 3, 1}
    assert_same(*read_both(since, until))
    assert_same(*read_both(since, until, regions=[regions[1].id]))
    # Shorter windows inside the week, from other grains.
    assert_same(*read_both(week + 2 * DAY + 2 * HOUR + timedelta(minutes=5), week + 4 * DAY + 13 * HOUR))
    assert spans_used(week + 2 * DAY + 2 * HOUR, week + 4 * DAY + 13 * HOUR) == {1, 3, 12, 24}


def test_the_region_rollups_are_really_what_is_read(probes, regions, week):
    fill(probes, week, 7 * 24, per_hour=1)
    rebuild_range(week, week + WEEK)
    by_region, by_probe = read_both(week, week + WEEK)
    assert_same(by_region, by_probe)
    RegionRollup.objects.filter(span_hours=168).update(samples=0)
    by_region, _ = read_both(week, week + WEEK)
    assert all(r.samples == 0 for r in by_region.values())


def test_a_block_with_one_unmarked_hour_is_not_read_and_that_hour_is_read_raw(probes, regions, week):
    fill(probes, week, 7 * 24)
    rebuild_range(week, week + WEEK)
    hole = week + 3 * DAY + 7 * HOUR
    RollupHour.objects.filter(hour=hole).delete()
    tiles = ladder_tiles(week, week + WEEK, coverage(week, week + WEEK).covered_hours)
    assert all(not (start <= hole < start + HOUR * span) for span, start in tiles)
    assert (168, week) not in tiles and (24, floor_day(hole)) not in tiles
    assert_same(*read_both(week, week + WEEK))


def test_a_probe_repointed_at_another_target_reads_the_same(probes, regions, week):
    fill(probes, week, 3 * 24)
    probes[2].target = probes[3].target
    probes[2].save()
    fill(probes, week + 3 * DAY, 4 * 24, seed=1)
    rebuild_range(week, week + WEEK)
    assert spans_used(week, week + WEEK) == {168}
    assert_same(*read_both(week, week + WEEK))


def test_a_late_row_unmarks_its_blocks_until_the_rebuild_rebuilds_them(probes, regions, week):
    fill(probes, week, 7 * 24)
    rebuild_range(week, week + WEEK)
    late = week + 5 * DAY + 13 * HOUR + timedelta(minutes=3)
    payload = {
        "probe_id": probes[0].id,
        "target_id": probes[0].target_id,
        "region_id": regions[0].id,
        "scheduled_for": late.isoformat(),
        "worker": "late",
        "result": EngineResult(started_at=late.isoformat(), ttft_ms=77_777.0).to_dict(),
    }
    assert len(store([payload])) == 1
    assert 168 not in spans_used(week, week + WEEK)
    before, reference = read_both(week, week + WEEK)
    assert_same(before, reference)
    assert before[(regions[0].id,)].hists["ttft"].percentile(1.0) == pytest.approx(77_777.0, rel=0.02)

    rebuild_hour(late)
    assert spans_used(week, week + WEEK) == {168}
    after, reference = read_both(week, week + WEEK)
    assert_same(after, reference)
    assert after[(regions[0].id,)].samples == before[(regions[0].id,)].samples


def test_blocks_straddling_the_rollup_retention_cut_are_not_read_once_part_of_them_is_pruned(
    probes, regions, week, settings
):
    fill(probes, week, 7 * 24, per_hour=1)
    rebuild_range(week, week + WEEK)
    # Raw rows stay (a longer raw retention), rollups go before the cut, in
    # the middle of the 7-day block, of a day and of a 12 h block.
    cut = week + 3 * DAY + 5 * HOUR
    settings.LATENCY_RETENTION_DAYS = 365
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 1
    prune_raw(now=cut + DAY)
    assert not RegionRollup.objects.filter(start__lt=floor_day(cut) - 12 * HOUR, span_hours__lt=168).exists()
    assert RegionRollup.objects.filter(span_hours=168, start=week).exists()
    assert 168 not in spans_used(week, week + WEEK)
    # The pruned hours are read raw by both; the rest from what is left.
    assert_same(*read_both(week, week + WEEK))

    # Rebuilt (the raw rows are still there), every block is whole again.
    merge_cache.clear()
    rebuild_range(week, cut)
    assert spans_used(week, week + WEEK) == {168}
    assert_same(*read_both(week, week + WEEK))
