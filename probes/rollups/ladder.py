"""Region rollups: for each region, the merge of every probe's hourly rollups
over EPOCH-aligned blocks of 1 h, 3 h, 12 h, 1 d and 7 d (periods.GRAINS), so
that a reading of all targets merges a few rows per region instead of one per
probe, region and hour (hierarchical rollups, as TimescaleDB's continuous
aggregates on aggregates or Thanos' downsampling).

Built in SQL in the transaction that rebuilds hours (build._build): the 1 h
blocks of the rebuilt hours counted from their raw rows by the statement that
builds their hourly rollups (build._hourly_sql; merging the hourly histograms
into them here cost twice that statement), then each coarser block holding
them from the blocks of the next finer grain inside it (merge_sql). So a
block is always the merge of the hourly rows of its hours, and readers
(probes.readings) use it only when all its hours carry a RollupHour mark, the
same rule as DailyRollup's: a late row unmarks its hour, so every block
holding it goes unread until the rebuild, which rebuilds them.
"""

from __future__ import annotations

import functools
import itertools
from datetime import datetime, timedelta

from django.db import connection

from probes.metrics import HISTOGRAM
from probes.packed import EMPTY_SQL, entries_sql, pack_agg
from probes.rollups.locks import lock_region_week
from probes.rollups.periods import EPOCH, GRAINS, HOUR, block_start

HIST_COLUMNS = tuple(str(m.rollup_field) for m in HISTOGRAM)
JSON_COLUMNS = ("outcomes", *HIST_COLUMNS)
WEEK = GRAINS[-1]


def merge_sql(
    table: str, source: str, time_column: str, seconds: str | None, only: str, keys: tuple[str, ...] = ("region_id",)
) -> str:
    """One INSERT of the blocks of %(span)s hours starting in [%(a)s, %(b)s),
    one per `keys` (a region here; a probe, region and target for the series
    rollups, probes.rollups.series_blocks), each the merge of the `source`
    rows (alias s) whose `time_column` falls in it; `seconds` is the source's
    expression of samples x hour midpoint (None: the table keeps none), `only`
    its own filter (the finer grain of the block table, or TRUE).

    One pass over the source rows: every (key, block, column, bucket) is
    summed in one GROUP BY, each (key, block, column) made one jsonb or histogram, and
    those pivoted into columns. Per-group correlated subqueries (the daily merge's form) would
    walk the source once per key, block and column."""
    # Outcome names compared bytewise (COLLATE "C"): the GROUP BY sorts every entry by them, and under the
    # database's own collation (C.UTF-8 here) each text comparison went through strcoll (the four series merges
    # over 60 days at 10 M rows took 54.1 s this way against 70.8 s, bench/rollup.py's rows, one connection).
    # Outcomes are column 0 (jsonb, by name), each histogram its position after it (probes.packed, by bucket).
    pairs = ", ".join(f"({i}, s.{c})" for i, c in enumerate(HIST_COLUMNS, start=1))
    pivots = ", ".join(
        [
            "(array_agg(o.obj) FILTER (WHERE o.col = 0))[1] AS outcomes",
            *(f"(array_agg(o.bin) FILTER (WHERE o.col = {i}))[1] AS {c}" for i, c in enumerate(HIST_COLUMNS, 1)),
        ]
    )
    merged = ", ".join(["coalesce(j.outcomes, '{}'::jsonb)", *(f"coalesce(j.{c}, {EMPTY_SQL})" for c in HIST_COLUMNS)])
    block = f"date_bin(make_interval(hours => %(span)s), s.{time_column}, %(epoch)s)"
    where = f"{only} AND s.{time_column} >= %(a)s AND s.{time_column} < %(b)s"
    n = len(keys)
    source_keys = ", ".join(f"s.{k}" for k in keys)
    positions = ", ".join(str(i) for i in range(1, n + 2))  # the keys and the block
    seconds_column, seconds_value, seconds_sum = (
        (", sample_seconds", ", t.seconds", f", sum({seconds}) AS seconds") if seconds else ("", "", "")
    )
    joined = " AND ".join(f"j.{k} = t.{k}" for k in (*keys, "b"))
    return f"""
        INSERT INTO {table}
            ({", ".join(keys)}, span_hours, start, samples, errors{seconds_column}, updated_at,
             {", ".join(JSON_COLUMNS)})
        SELECT {", ".join(f"t.{k}" for k in keys)}, %(span)s, t.b, t.samples, t.errors{seconds_value}, %(now)s,
               {merged}
        FROM (
            SELECT {source_keys}, {block} AS b, sum(s.samples) AS samples, sum(s.errors) AS errors{seconds_sum}
            FROM {source} s WHERE {where} GROUP BY {positions}
        ) t
        LEFT JOIN (
            SELECT {", ".join(f"o.{k}" for k in keys)}, o.b, {pivots}
            FROM (
                SELECT {", ".join(f"e.{k}" for k in keys)}, e.b, e.col,
                       jsonb_object_agg(e.name, e.n) FILTER (WHERE e.col = 0) AS obj,
                       {pack_agg("e.bucket", "e.n", "e.col > 0")} AS bin
                FROM (
                    SELECT {source_keys}, {block} AS b, x.col, x.name, x.bucket, sum(x.n) AS n
                    FROM {source} s
                    CROSS JOIN LATERAL (
                        SELECT 0 AS col, o.key COLLATE "C" AS name, NULL::int AS bucket, o.value::bigint AS n
                        FROM jsonb_each_text(s.outcomes) o
                        UNION ALL
                        SELECT m.col, NULL, e.bucket, e.n
                        FROM (VALUES {pairs}) AS m(col, hist) CROSS JOIN LATERAL {entries_sql("m.hist")} e
                    ) x
                    WHERE {where}
                    GROUP BY {positions}, {n + 2}, {n + 3}, {n + 4}
                ) e
                GROUP BY {positions}, {n + 2}
            ) o
            GROUP BY {positions}
        ) j ON {joined}
    """


@functools.cache
def _statements() -> list[tuple[int, str]]:
    """(grain, INSERT) per grain, finest first: 1 h blocks from the hourly
    rollups, each coarser grain from the one before it."""
    from probes.models import HourlyRollup, RegionRollup

    table = RegionRollup._meta.db_table
    out = [
        (
            GRAINS[0],
            merge_sql(
                table,
                HourlyRollup._meta.db_table,
                "hour",
                "s.samples * (extract(epoch FROM s.hour) + 1800)",
                "TRUE",
            ),
        )
    ]
    for finer, grain in itertools.pairwise(GRAINS):
        out.append((grain, merge_sql(table, table, "start", "s.sample_seconds", f"s.span_hours = {finer}")))
    return out


def rebuild_blocks(
    since: datetime, until: datetime, now: datetime, *, hours_built: list[datetime] | None = None
) -> None:
    """Rebuild every region block holding an hour of [since, until) (whole
    hours of one UTC day), finest grain first, each from the rows just
    rebuilt below it. Call it inside the transaction that rebuilt those
    hours' HourlyRollup rows, holding the day's lock (build._build does):
    the blocks up to 1 d lie inside the day, and the 7 d block, which other
    days' rebuilds merge too, is taken under its own lock last.

    hours_built: the hours whose 1 h blocks the caller has just written
    (stamped updated_at = now) from the same raw rows as their hourly rollups
    (build._hourly_sql does). Their other 1 h blocks (a region with no raw
    rows left there) are deleted, as their hourly rollups are; the other
    hours of the range had no raw rows, so their hourly rollups and 1 h
    blocks stay as they are (pruned hours keep theirs). None: the 1 h blocks
    are merged from the hourly rollups here."""
    from probes.models import RegionRollup

    table = RegionRollup._meta.db_table
    with connection.cursor() as cur:
        cur.execute("SET LOCAL jit = off")
        # A Memoize over a row's expanded outcomes or histograms, keyed by the
        # whole value, nearly never hits (every row's differ) and costs its hashing.
        cur.execute("SET LOCAL enable_memoize = off")
        for grain, sql in _statements():
            if grain == GRAINS[0] and hours_built is not None:
                cur.execute(
                    f"DELETE FROM {table} WHERE span_hours = %s AND start = ANY(%s) AND updated_at <> %s",
                    [grain, hours_built, now],
                )
                continue
            span = timedelta(hours=grain)
            a = block_start(since, span)
            b = block_start(until - HOUR, span) + span
            if grain == WEEK:
                assert b - a == span, "a rebuild covers one day, so one 7-day block"
                lock_region_week(a)
            cur.execute(f"DELETE FROM {table} WHERE span_hours = %s AND start >= %s AND start < %s", [grain, a, b])
            cur.execute(sql, {"span": grain, "a": a, "b": b, "now": now, "epoch": EPOCH})


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
