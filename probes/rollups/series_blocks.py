"""Series rollups: one probe's daily rollups from one region, for one target,
merged over EPOCH-aligned blocks of 2, 4, 8 and 16 days
(periods.SERIES_GRAINS), so that a long window read per probe or target (the
table of every target: 900 series over 30 days at bench/dashboard.py's
size) merges a few rows per series instead of one a day. The region rollups
(probes.rollups.ladder) do the same for reads grouped by region alone.

A block is read only when its SeriesBlockMark is there and every day in it is
complete (all 24 hours marked, as for a daily row). The mark keeps it from
ever being read stale:

- every rebuild of a day (build._build) deletes the marks of the blocks
  holding that day, under the lock of their 16-day block, before it commits
  the day's new rollups;
- when the day is complete at the end of that rebuild, it rebuilds those
  blocks from the daily rows (with every other unmarked block of their
  16-day block: see rebuild) and marks each whose hours are all marked;
  otherwise (the current day, rebuilt every few minutes) it leaves them
  unmarked, which costs nothing, and the rebuild that completes the day
  builds them;
- a range rebuild (rebuild_range over days) leaves them to one closing pass
  (rebuild_series_range), so each block is merged once rather than once a
  day; meanwhile readers take the daily rows, which are always right.

So a mark means the block is the merge of its days' daily rows as they are.

The same table and marks hold the series blocks inside a day (3 h and 12 h),
which probes.rollups.hour_blocks builds from hourly rows with the hours.
"""

from __future__ import annotations

import functools
import itertools
from datetime import datetime, timedelta

from django.db import connection, transaction

from probes.rollups.block_merge import merge_blocks
from probes.rollups.locks import lock_series_block
from probes.rollups.periods import DAY, HOUR, SERIES_GRAINS, SERIES_HOUR_GRAINS, block_start
from probes.rollups.side_by_side import side_by_side

KEYS = ("probe_id", "region_id", "target_id")
LARGEST = HOUR * SERIES_GRAINS[-1]


@functools.cache
def _sources() -> list[tuple[int, dict]]:
    """(grain, block_merge.merge_blocks arguments) per grain, finest first: 2-day blocks from the daily rollups,
    each coarser grain from the one before it."""
    from probes.models import DailyRollup, SeriesRollup

    table = SeriesRollup._meta.db_table
    common = {"table": table, "seconds": None, "keys": KEYS}
    out = [(SERIES_GRAINS[0], {**common, "source": DailyRollup._meta.db_table, "time_column": "day", "only": "TRUE"})]
    for finer, grain in itertools.pairwise(SERIES_GRAINS):
        out.append((grain, {**common, "source": table, "time_column": "start", "only": f"s.span_hours = {finer}"}))
    return out


def _grain_range(since: datetime, until: datetime, grain: int) -> tuple[datetime, datetime]:
    """The blocks of a grain holding any day of [since, until): [first start, last end)."""
    span = HOUR * grain
    return block_start(since, span), block_start(until - DAY, span) + span


def unmark(day: datetime) -> None:
    """Delete the marks of every block holding `day`. Call it holding the lock
    of the day's 16-day block (lock_series_block), in the transaction that
    changes the day's rollups."""
    from probes.models import SeriesBlockMark

    starts = [(grain, block_start(day, HOUR * grain)) for grain in SERIES_GRAINS]
    with connection.cursor() as cur:
        cur.execute(
            f"DELETE FROM {SeriesBlockMark._meta.db_table} WHERE (span_hours, start) IN "
            "(SELECT * FROM unnest(%s::int[], %s::timestamptz[]))",
            [[g for g, _ in starts], [s for _, s in starts]],
        )


def rebuild(since: datetime, until: datetime, now: datetime) -> dict[int, tuple[datetime, datetime]]:
    """Rebuild every block holding a day of [since, until) (whole days inside
    one 16-day block), finest grain first, each from the rows just rebuilt
    below it, leaving them unmarked: mark_complete marks them once the hours'
    own marks are final. Call it holding the lock of that 16-day block, after
    the days' daily rows are final. Returns the range of blocks rebuilt per
    grain, for mark_complete.

    A coarser block is merged from the finer blocks inside it, so those must
    be right too: every unmarked block of the 16-day block is rebuilt with
    them. A marked one is right by its mark; an unmarked one holding a day
    that is not complete (the days ahead, nearly empty) cannot make a block
    that gets marked wrong, but one whose days were all completed without its
    rebuild (a range rebuild stopped before its closing pass) could."""
    from probes.models import SeriesBlockMark, SeriesRollup

    whole = block_start(since, LARGEST)
    assert whole == block_start(until - DAY, LARGEST), "one 16-day block at a time"
    table, marks = SeriesRollup._meta.db_table, SeriesBlockMark._meta.db_table
    marked = set(
        SeriesBlockMark.objects.filter(start__gte=whole, start__lt=whole + LARGEST).values_list("span_hours", "start")
    )
    rebuilt: dict[int, tuple[datetime, datetime]] = {}
    with connection.cursor() as cur:
        cur.execute("SET LOCAL jit = off")
        for grain, merge in _sources():
            span = HOUR * grain
            a, b = _grain_range(since, until, grain)
            unmarked = [s for s in (whole + span * i for i in range(LARGEST // span)) if (grain, s) not in marked]
            if unmarked:
                a, b = min(a, unmarked[0]), max(b, unmarked[-1] + span)
            cur.execute(f"DELETE FROM {marks} WHERE span_hours = %s AND start >= %s AND start < %s", [grain, a, b])
            cur.execute(f"DELETE FROM {table} WHERE span_hours = %s AND start >= %s AND start < %s", [grain, a, b])
            merge_blocks(cur, **merge, span_hours=grain, a=a, b=b, now=now)
            rebuilt[grain] = (a, b)
    return rebuilt


def mark_complete(rebuilt: dict[int, tuple[datetime, datetime]], now: datetime) -> None:
    """Mark the blocks rebuild (or hour_blocks.rebuild) just rebuilt (its return value) whose hours all
    carry a RollupHour mark now. A block with no rows (nothing measured in its
    days) is marked too: reading it adds nothing, which is right."""
    from probes.models import RollupHour, SeriesBlockMark

    with connection.cursor() as cur:
        for grain, (a, b) in rebuilt.items():
            cur.execute(
                f"""
                INSERT INTO {SeriesBlockMark._meta.db_table} (span_hours, start, built_at)
                SELECT %(grain)s, s, %(now)s
                FROM generate_series(%(a)s::timestamptz, %(b)s::timestamptz - %(span)s, %(span)s) AS s
                WHERE (SELECT count(*) FROM {RollupHour._meta.db_table} h
                       WHERE h.hour >= s AND h.hour < s + %(span)s) = %(grain)s
                ON CONFLICT (span_hours, start) DO UPDATE SET built_at = EXCLUDED.built_at
                """,
                {"grain": grain, "span": timedelta(hours=grain), "a": a, "b": b, "now": now},
            )


def rebuild_series_range(since: datetime, until: datetime, now: datetime, *, workers: int = 1) -> None:
    """The closing pass of a range rebuild: the blocks holding any day of
    [since, until) (whole days), one 16-day block per transaction, each under
    its lock. workers > 1 builds that many 16-day blocks at once, each on a
    connection of its own (they share no row and no lock), as rebuild_range
    builds days; only outside a transaction."""
    chunks = []
    start = block_start(since, LARGEST)
    while start < until:
        chunks.append((start, max(since, start), min(until, start + LARGEST)))
        start += LARGEST

    def build(chunk: tuple[datetime, datetime, datetime]) -> None:
        whole, a, b = chunk
        with transaction.atomic():
            lock_series_block(whole)
            mark_complete(rebuild(a, b, now), now)

    side_by_side(build, chunks, workers)


def prune_day_blocks(old: datetime) -> int:
    """Delete the blocks of days wholly before `old` (the rollup retention's cut) and their marks. A block
    straddling the cut keeps the merge of its pruned days, but they lose their hours' marks, so no reader uses it."""
    return _prune(old, SERIES_GRAINS)


def prune_hour_blocks(old: datetime) -> int:
    """As prune_day_blocks, for the blocks inside a day (probes.rollups.hour_blocks), which share the table."""
    return _prune(old, SERIES_HOUR_GRAINS)


def _prune(old: datetime, grains: tuple[int, ...]) -> int:
    from probes.models import SeriesBlockMark, SeriesRollup

    with connection.cursor() as cur:
        for table in (SeriesBlockMark._meta.db_table, SeriesRollup._meta.db_table):
            cur.execute(
                f"DELETE FROM {table} WHERE span_hours = ANY(%s) AND start + make_interval(hours => span_hours) <= %s",
                [list(grains), old],
            )
        return cur.rowcount
