"""A range rebuild stores its rollup rows a period at a time: the hourly rows hour by hour, and the series blocks
(inside a day and of days) block by block, as readers of every series over a few periods ask for them. Each period's
rows then lie on a page or two, not spread over the pages of its day or range."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime

from django.db import connection

from probes.rollups import DAY, floor_day, rebuild_range
from tests.region_rollups.rows import fill


def pages_per_period(table: str, period: str) -> list[int]:
    """For each period, how many of the table's pages hold its rows."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(DISTINCT (ctid::text::point)[0]) FROM {table} GROUP BY {period}")
        return [n for (n,) in cur.fetchall()]


def test_a_range_rebuild_stores_each_hours_rows_and_each_blocks_rows_together(probes, regions):
    # Emptied in the test's transaction (new files, rolled back with it): no free space left by earlier tests'
    # rows for these to fill.
    with connection.cursor() as cur:
        cur.execute("TRUNCATE probes_hourlyrollup, probes_seriesrollup")
    day = floor_day(datetime.now(UTC)) - 20 * DAY
    fill(probes, day, 16 * 24, per_hour=1)
    rebuild_range(day, day + 16 * DAY)

    # Ten rows an hour and a block, a few dozen to a page. Written in series order, an hour's rows lay on six
    # pages (median) and a block's on four.
    hours = pages_per_period("probes_hourlyrollup", "hour")
    blocks = pages_per_period("probes_seriesrollup", "span_hours, start")
    assert len(hours) == 16 * 24 and len(blocks) > 100
    assert statistics.median(hours) <= 2
    assert statistics.median(blocks) <= 2
