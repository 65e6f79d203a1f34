"""A time series of named targets over 7 and 30 days (3 h and 12 h buckets) takes a bucket of marked hours from the
series blocks inside a day (probes.rollups.hour_blocks) instead of its hourly rollups, and gives the same points,
`at` included; a bucket whose blocks are unmarked (a late row) is read from its hours, and still gives what they
hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from probes import readings
from probes.models import Region
from probes.readings.cache import merge_cache
from probes.readings.selection import Selection
from probes.rollups import DAY, floor_day, rebuild_range
from probes.rollups.periods import HOUR
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import no_block_marks, store_late_row

WINDOWS = {"7d": timedelta(days=7), "30d": timedelta(days=30)}


def series_of(f: Selection) -> tuple[list, bool]:
    """The series (nothing cached), and whether it read series rollups."""
    merge_cache.clear()
    with CaptureQueriesContext(connection) as queries:
        rows = readings.series(f)
    return rows, any("probes_seriesrollup" in q["sql"] for q in queries.captured_queries)


def selection(window: str, targets: list[int]) -> Selection:
    now = datetime.now(UTC)
    return Selection(target_ids=targets, since=now - WINDOWS[window], until=now, window=window, percentile=0.9)


@pytest.fixture
def three_days(probes, regions) -> datetime:
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, day, 3 * 24, per_hour=3)
    rebuild_range(day, day + 3 * DAY)
    return day


@pytest.mark.parametrize("window", list(WINDOWS))
@pytest.mark.parametrize("named", ["one target", "every target by name"])
def test_a_series_of_named_targets_from_blocks_gives_what_their_hours_give(three_days, probes, window, named):
    targets = sorted({p.target_id for p in probes})
    f = selection(window, targets[:1] if named == "one target" else targets)
    size = readings.bucket_size(f)
    got, used = series_of(f)
    with no_block_marks():
        want, used_without = series_of(f)
    assert used and not used_without
    rolled = [row for row in want if three_days <= row["bucket_start"] < three_days + 3 * DAY]
    # Every region of the targets, every bucket of the three days.
    assert len({row["bucket_start"] for row in rolled}) == 3 * DAY // size
    assert got == want


def test_a_bucket_with_a_late_row_is_read_from_its_hours_with_the_row(three_days, probes):
    f = selection("30d", [probes[0].target_id])
    before, _ = series_of(f)
    late_hour = three_days + DAY + 7 * HOUR
    region_id, _ = store_late_row(probes[0], late_hour)
    got, used = series_of(f)
    assert used  # the other buckets still read their blocks
    with no_block_marks():
        want, _ = series_of(f)
    assert got == want
    samples = {(row["region"], row["bucket_start"]): row["samples"] for row in got}
    for row in before:
        key = (row["region"], row["bucket_start"])
        late = key == (Region.objects.get(id=region_id).slug, three_days + DAY)  # the 12 h bucket of 07:20
        assert samples[key] == row["samples"] + late, key
