"""Series rollups of days: one probe's rollups from one region, for one target, merged over EPOCH-aligned blocks of
2, 4, 8 and 16 days (periods.SERIES_GRAINS), so that a long window read per probe or target (the table of every
target: 900 series over 30 days at bench/dashboard.py's size) merges a few rows per series instead of one per 12 h
block or hour. The 2-day blocks are merged from the 12 h blocks inside them (probes.rollups.hour_blocks), each
coarser grain from the grain before it. The region rollups (probes.rollups.ladder) do the same for reads grouped by
region alone.

A block is read only when its SeriesBlockMark is there and every hour in it is marked (plan.series_tiles takes
complete days only). The mark keeps it from ever being read stale:

- every rebuild of hours of a day (build._build, through this kind's builder) deletes the marks of the blocks
  holding that day, under the lock of their 16-day block, before it commits the day's new rollups (its 12 h blocks
  among them);
- when the day is complete at the end of that rebuild, it rebuilds those blocks from the 12 h blocks, which the
  series_hours kind's builder has just rebuilt before it in the same transaction (with every other unmarked block
  of their 16-day block: see rebuild), and marks each whose hours are all marked and whose finer blocks (the 12 h
  blocks of a 2-day block, the 2-day blocks of a 4-day one, ...) all carry their marks then (mark_complete): a
  finer block's mark says it is the merge of its hours as they are, so the merge of such blocks is too; a 12 h
  block that is missing (hours marked before those blocks existed) leaves the blocks over it unmarked. Otherwise
  (the current day, rebuilt every few minutes) it leaves them unmarked, which costs nothing, and the rebuild that
  completes the day builds them;
- a range rebuild (rebuild_range over days) leaves them to one closing pass (rebuild_series_range, this kind's
  closer), so each block is merged once rather than once a day; meanwhile readers take the 12 h blocks and hours,
  which are always right.

A late row unmarks its hour: the blocks over it hold a day that is no longer complete, so they go unread until the
hour's rebuild, which unmarks and rebuilds them. So a mark means the block is the merge of its hours' rollups as
they are.

The same table and marks hold the series blocks inside a day (3 h and 12 h), which probes.rollups.hour_blocks
builds from hourly rows with the hours.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection, transaction

from probes.rollups.block_merge import merge_blocks
from probes.rollups.locks import lock_series_block
from probes.rollups.periods import DAY, HOUR, SERIES_GRAINS, SERIES_HOUR_GRAINS, block_start
from probes.rollups.side_by_side import side_by_side

if TYPE_CHECKING:
    from probes.rollups.build import HourBuild

KEYS = ("probe_id", "region_id", "target_id")
LARGEST = HOUR * SERIES_GRAINS[-1]


# The grain of the blocks each grain of blocks of days is merged from: 2-day blocks from the coarsest blocks inside
# a day (12 h), each coarser grain from the grain before it. A block is marked only with all of those marked.
FINER = {grain: finer for finer, grain in itertools.pairwise((SERIES_HOUR_GRAINS[-1], *SERIES_GRAINS))}
assert all(grain % finer == 0 for grain, finer in FINER.items())


@functools.cache
def _sources() -> list[tuple[int, dict]]:
    """(grain, block_merge.merge_blocks arguments) per grain, finest first: each from the blocks of FINER[grain]
    in the same table (their sample_seconds not kept: no time series reads blocks of days)."""
    from probes.models import SeriesRollup

    table = SeriesRollup._meta.db_table
    common = {"table": table, "source": table, "time_column": "start", "seconds": None, "keys": KEYS}
    return [(grain, {**common, "only": f"s.span_hours = {FINER[grain]}"}) for grain in SERIES_GRAINS]


def build(job: HourBuild) -> Callable[[], None]:
    """The series_days kind's builder (catalogue.SERIES_DAYS): under the lock of the day's 16-day block, unmark the
    blocks holding the day, and rebuild them if the day ends complete unless a closing pass follows (job.closing).
    Returns the step marking them once the hours' marks are written. Runs after the series_hours kind's builder,
    whose 12 h blocks of the day these are merged from."""
    day = job.day
    lock_series_block(block_start(day, LARGEST))
    unmark(day)
    rebuilt = rebuild(day, day + DAY, job.now) if job.ends_complete and not job.closing else {}
    return functools.partial(mark_complete, rebuilt, job.now)


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
    the days' 12 h blocks are final. Returns the range of blocks rebuilt per
    grain, for mark_complete.

    A coarser block is merged from the finer blocks inside it, so those must
    be right too: every unmarked block of the 16-day block is rebuilt with
    them. A marked one is right by its mark; an unmarked one holding a day
    that is not complete (the days ahead, nearly empty) cannot make a block
    that gets marked wrong, but one whose days were all completed without its
    rebuild (a range rebuild stopped before its closing pass) could. A block merged from a finer block that is
    missing or stale is left unmarked by mark_complete, which asks for the finer blocks' marks."""
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
    """Mark the blocks rebuild (or hour_blocks.rebuild) just rebuilt (its return value), finest grain first,
    whose hours all carry a RollupHour mark now and, for a block merged from finer blocks (FINER), whose finer
    blocks all carry their marks now. A block with no rows (nothing measured in its hours) is marked too: reading
    it adds nothing, which is right."""
    from probes.models import RollupHour, SeriesBlockMark

    marks = SeriesBlockMark._meta.db_table
    with connection.cursor() as cur:
        for grain, (a, b) in sorted(rebuilt.items()):
            finer = FINER.get(grain)
            params = {"grain": grain, "span": timedelta(hours=grain), "a": a, "b": b, "now": now}
            sources = ""
            if finer is not None:
                sources = (
                    f"AND (SELECT count(*) FROM {marks} f WHERE f.span_hours = %(finer)s "
                    "AND f.start >= s AND f.start < s + %(span)s) = %(parts)s"
                )
                params |= {"finer": finer, "parts": grain // finer}
            cur.execute(
                f"""
                INSERT INTO {marks} (span_hours, start, built_at)
                SELECT %(grain)s, s, %(now)s
                FROM generate_series(%(a)s::timestamptz, %(b)s::timestamptz - %(span)s, %(span)s) AS s
                WHERE (SELECT count(*) FROM {RollupHour._meta.db_table} h
                       WHERE h.hour >= s AND h.hour < s + %(span)s) = %(grain)s
                {sources}
                ON CONFLICT (span_hours, start) DO UPDATE SET built_at = EXCLUDED.built_at
                """,
                params,
            )


def rebuild_series_range(since: datetime, until: datetime, now: datetime, *, workers: int = 1) -> None:
    """The closing pass of a range rebuild (this kind's closer: catalogue.RollupKind.closer): the blocks holding
    any day of [since, until) (whole days), one 16-day block per transaction, each under its lock. workers > 1
    builds that many 16-day blocks at once, each on a connection of its own (they share no row and no lock), as
    rebuild_range builds days; only outside a transaction."""
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
