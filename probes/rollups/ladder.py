"""Region rollups: for each region, the merge of every probe's hourly rollups
over EPOCH-aligned blocks of 1 h, 3 h, 12 h, 1 d and 7 d (periods.GRAINS), so
that a reading of all targets merges a few rows per region instead of one per
probe, region and hour (hierarchical rollups, as TimescaleDB's continuous
aggregates on aggregates or Thanos' downsampling).

Built in the transaction that rebuilds hours (build._build): the 1 h blocks
of the rebuilt hours counted from their raw rows by the statement that
builds their hourly rollups (build._hourly_sql; merging the hourly histograms
into them here cost twice that statement), then each coarser block holding
them from the blocks of the next finer grain inside it, merged by numpy
(probes.rollups.block_merge). So a
block is always the merge of the hourly rows of its hours, and readers
(probes.readings) use it only when all its hours carry a RollupHour mark: a
late row unmarks its hour, so every block holding it goes unread until the
rebuild, which rebuilds them.
"""

from __future__ import annotations

import functools
import itertools
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection

from probes.rollups.block_merge import merge_blocks
from probes.rollups.locks import lock_region_week
from probes.rollups.periods import GRAINS, HOUR, block_start

if TYPE_CHECKING:
    from probes.rollups.build import HourBuild

WEEK = GRAINS[-1]


@functools.cache
def _sources() -> list[tuple[int, dict]]:
    """(grain, block_merge.merge_blocks arguments) per grain above the finest, finest first: each from the blocks of
    the grain before it (the 1 h blocks are written by the hourly statement, build._hourly_sql)."""
    from probes.models import RegionRollup

    table = RegionRollup._meta.db_table
    common = {"table": table, "source": table, "time_column": "start", "seconds": "s.sample_seconds"}
    return [
        (grain, {**common, "keys": ("region_id",), "only": f"s.span_hours = {finer}"})
        for finer, grain in itertools.pairwise(GRAINS)
    ]


def build(job: HourBuild) -> None:
    """The region kind's builder (catalogue.REGION): its blocks above 1 h holding the rebuilt hours, merged again
    from the 1 h blocks the hourly kind's statement just wrote (job.written's hours)."""
    rebuild_blocks(job.since, job.until, job.now, hours_built=sorted(job.written))


def rebuild_blocks(since: datetime, until: datetime, now: datetime, *, hours_built: list[datetime]) -> None:
    """Rebuild every region block holding an hour of [since, until) (whole
    hours of one UTC day), finest grain first, each from the rows just
    rebuilt below it. Call it inside the transaction that rebuilt those
    hours' HourlyRollup rows, holding the day's lock (build does):
    the blocks up to 1 d lie inside the day, and the 7 d block, which other
    days' rebuilds merge too, is taken under its own lock last.

    hours_built: the hours whose 1 h blocks the caller has just written
    (stamped updated_at = now) from the same raw rows as their hourly rollups
    (build._hourly_sql does). Their other 1 h blocks (a region with no raw
    rows left there) are deleted, as their hourly rollups are; the other
    hours of the range had no raw rows, so their hourly rollups and 1 h
    blocks stay as they are (pruned hours keep theirs)."""
    from probes.models import RegionRollup

    table = RegionRollup._meta.db_table
    with connection.cursor() as cur:
        cur.execute("SET LOCAL jit = off")
        cur.execute(
            f"DELETE FROM {table} WHERE span_hours = %s AND start = ANY(%s) AND updated_at <> %s",
            [GRAINS[0], hours_built, now],
        )
        for grain, merge in _sources():
            span = timedelta(hours=grain)
            a = block_start(since, span)
            b = block_start(until - HOUR, span) + span
            if grain == WEEK:
                assert b - a == span, "a rebuild covers one day, so one 7-day block"
                lock_region_week(a)
            cur.execute(f"DELETE FROM {table} WHERE span_hours = %s AND start >= %s AND start < %s", [grain, a, b])
            merge_blocks(cur, **merge, span_hours=grain, a=a, b=b, now=now)


def prune_blocks(old: datetime) -> int:
    """Delete the region blocks wholly before `old` (the rollup retention's
    cut, whose hourly rows and marks go with them). A block straddling the
    cut keeps the merge of its pruned hours, but those hours lose their
    marks, so no reader uses it; a rebuild of any of its hours rebuilds it
    from the finer blocks left, which no longer hold them."""
    from probes.models import RegionRollup

    with connection.cursor() as cur:
        cur.execute(
            f"DELETE FROM {RegionRollup._meta.db_table} WHERE start + make_interval(hours => span_hours) <= %s", [old]
        )
        return cur.rowcount
