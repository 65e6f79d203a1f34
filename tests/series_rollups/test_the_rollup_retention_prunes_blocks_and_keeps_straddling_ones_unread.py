"""The rollup retention deletes the series blocks wholly before its cut with
their marks; a block straddling the cut stays, but its pruned days lose
their hours' marks, so no reading uses it until a rebuild makes it whole."""

from __future__ import annotations

from datetime import UTC, datetime

from probes.models import SeriesBlockMark, SeriesRollup
from probes.readings.plan import complete_days, coverage, series_tiles
from probes.rollups import DAY, HOUR, prune_raw, rebuild_range
from probes.rollups.periods import SERIES_GRAINS, block_start
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import assert_same, read, read_without_blocks

SIXTEEN_DAYS = HOUR * SERIES_GRAINS[-1]


def test_blocks_before_the_cut_go_and_a_straddling_one_is_not_read(probes, regions, settings):
    start = block_start(datetime.now(UTC) - 20 * DAY, SIXTEEN_DAYS) - SIXTEEN_DAYS
    until = start + 16 * DAY
    fill(probes, start, 16 * 24, per_hour=1)
    rebuild_range(start, until)
    # Rollups go before the cut, the middle of day 5 (raw rows stay: a
    # longer raw retention).
    cut = start + 5 * DAY + 7 * HOUR
    settings.LATENCY_RETENTION_DAYS = 365
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 1
    prune_raw(now=cut + DAY)

    gone = [(48, start), (48, start + 2 * DAY), (96, start)]
    for span, s in gone:
        assert not SeriesRollup.objects.filter(span_hours=span, start=s).exists()
        assert not SeriesBlockMark.objects.filter(span_hours=span, start=s).exists()
    # The 16-day block holds pruned days: kept, marked, and not read.
    assert SeriesBlockMark.objects.filter(span_hours=SERIES_GRAINS[-1], start=start).exists()
    tiles, _ = series_tiles(complete_days(coverage(start, until).hours)[0])
    assert tiles and all(s >= start + 6 * DAY for _, s in tiles)
    got, _ = read(start, until, probes)
    assert_same(got, read_without_blocks(start, until, probes))

    rebuild_range(start, cut)
    tiles, _ = series_tiles(complete_days(coverage(start, until).hours)[0])
    assert tiles == [(SERIES_GRAINS[-1], start)]
    got, used_blocks = read(start, until, probes)
    assert used_blocks
    assert_same(got, read_without_blocks(start, until, probes))
