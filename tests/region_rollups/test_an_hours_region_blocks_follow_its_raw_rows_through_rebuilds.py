"""The 1 h region blocks are counted from raw rows by the statement that
builds the hour's hourly rollups, so they follow the raw rows as the hourly
rollups do: a region whose rows of the hour are gone loses its block at the
next rebuild (and the coarser blocks their samples), while an hour with no
raw rows left at all (pruned) keeps its hourly rollups and its blocks."""

from __future__ import annotations

from datetime import UTC, datetime

from probes.models import HourlyRollup, Measurement, RegionRollup
from probes.rollups import DAY, HOUR, rebuild_hour
from probes.rollups.periods import block_start
from tests.region_rollups.rows import fill
from tests.region_rollups.test_a_region_block_is_the_merge_of_its_hourly_rollups import assert_merges, blocks


def an_hour() -> datetime:
    # Mid-day two days back: its day and every block holding it have ended.
    return block_start(datetime.now(UTC) - 2 * DAY, DAY) + 11 * HOUR


def hour_blocks(hour: datetime) -> dict[int, int]:
    return dict(RegionRollup.objects.filter(span_hours=1, start=hour).values_list("region", "samples"))


def test_a_region_whose_rows_of_the_hour_are_deleted_loses_its_block_at_the_rebuild(probes, regions):
    hour = an_hour()
    fill(probes, hour - HOUR, 3)
    rebuild_hour(hour)
    before = hour_blocks(hour)
    assert set(before) == {r.id for r in regions}
    gone = regions[0]
    Measurement.objects.filter(region=gone, started_at__gte=hour, started_at__lt=hour + HOUR).delete()
    rebuild_hour(hour)
    after = hour_blocks(hour)
    assert set(after) == set(before) - {gone.id}
    assert all(after[r] == before[r] for r in after)
    # The coarser blocks holding the hour were rebuilt from it: every block is still the merge of its hours.
    assert_merges(blocks())


def test_an_hour_with_no_raw_rows_left_keeps_its_blocks_as_it_keeps_its_hourly_rollups(probes, regions):
    hour = an_hour()
    fill(probes, hour, 1)
    rebuild_hour(hour)
    before = hour_blocks(hour)
    hourly = HourlyRollup.objects.filter(hour=hour).count()
    assert before and hourly
    Measurement.objects.filter(started_at__gte=hour, started_at__lt=hour + HOUR).delete()
    rebuild_hour(hour)
    assert hour_blocks(hour) == before
    assert HourlyRollup.objects.filter(hour=hour).count() == hourly
    assert_merges(blocks())
