"""A long window read per target and region merges series blocks for its runs
of complete days, and reads exactly what the hourly rollups give, and what
the raw rows give: before and after a late row, which keeps the blocks
holding its day unread until the rebuild that completes the day again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.readings.plan import complete_days, coverage, series_tiles
from probes.readings.window import read_window
from probes.rollups import DAY, HOUR, floor_hour, rebuild_hour, rebuild_range
from probes.rollups.periods import SERIES_GRAINS, block_start
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import GROUPS, assert_same, marks, read, read_without_blocks, store_late_row


def test_a_thirty_day_read_takes_blocks_and_equals_the_hourly_and_the_raw_read(probes, regions):
    now = floor_hour(datetime.now(UTC)) - 2 * HOUR
    since = now - timedelta(days=30) + timedelta(minutes=17)
    fill(probes, since - HOUR, 30 * 24 + 2, per_hour=1)
    rebuild_range(since - HOUR, now)
    blocks, loose = series_tiles(complete_days(coverage(since, now).hours)[0])
    # The 29 whole days inside the window are a few blocks and a loose day or two.
    assert sum(span for span, _ in blocks) // 24 + len(loose) == 29
    assert len(blocks) + len(loose) <= 8

    got, used_blocks = read(since, now, probes)
    assert used_blocks
    assert_same(got, read_without_blocks(since, now, probes))
    targets = sorted({p.target_id for p in probes})
    assert_same(got, read_window(since, now, group_by=GROUPS, target_ids=targets, rollups=False))


def test_a_late_row_keeps_the_blocks_of_its_day_unread_until_its_hour_is_rebuilt(probes, regions):
    start = block_start(datetime.now(UTC) - 20 * DAY, HOUR * SERIES_GRAINS[-1]) - HOUR * SERIES_GRAINS[-1]
    until = start + 16 * DAY
    fill(probes, start, 16 * 24, per_hour=1)
    rebuild_range(start, until)
    assert (SERIES_GRAINS[-1], start) in marks()
    before, _ = read(start, until, probes)

    late_hour = start + 9 * DAY + 4 * HOUR
    key = store_late_row(probes[0], late_hour)

    # The hour is unmarked, so its day is no longer complete: the blocks
    # holding it are skipped (their marks stay, but the tiling needs every
    # day complete), and the reading counts the late row from raw rows.
    tiles, _ = series_tiles(complete_days(coverage(start, until).hours)[0])
    assert all(not (s <= late_hour < s + HOUR * span) for span, s in tiles)
    during, used_blocks = read(start, until, probes)
    assert used_blocks
    assert during[key].samples == before[key].samples + 1
    assert_same(during, read_without_blocks(start, until, probes))

    rebuild_hour(late_hour)
    holding = {(grain, block_start(late_hour, HOUR * grain)) for grain in SERIES_GRAINS}
    assert holding <= marks()
    after, used_blocks = read(start, until, probes)
    assert used_blocks
    assert after[key].samples == before[key].samples + 1
    assert_same(after, during)


def test_the_current_days_rebuilds_build_no_block(probes, regions):
    now = datetime.now(UTC)
    fill(probes, floor_hour(now) - 2 * HOUR, 2, per_hour=1)
    rebuild_hour(floor_hour(now) - HOUR)
    rebuild_hour(floor_hour(now))
    assert not marks()
