"""regions.csv's rollup path as one statement: per time bucket x region x
target, the merged counts and the histogram bucket holding each nearest rank,
for every bucket of the selection at once (buckets.py's bucket_rows reads
the same figures one bucket at a time, through read_window; a test holds
the two to the same bytes).

Each bucket is planned as read_window plans a window (plan.coverage_of over
the bucket's part inside the selection: hourly rollups for its marked hours
and for its unmarked hours with a usable cut, whose raw rows above the cut are read too, raw rows
for the rest; the first hour, when the selection starts early in it, from its
rollups less its raw rows before the selection, counted -1); the plans of all
buckets are joined into one statement, whose rows find their bucket again by
date_bin, as raw.bucket_select's do.

Cost: a (bucket, region, target) made of exactly one hourly rollup row with
stored percentile cells (HourlyRollup.percentile_cells: one probe of a target
in a region, 1 h buckets) is read as it is, without opening its histograms or
formatting a cell; only the other
groups have their histograms expanded (probes.packed.entries_sql), merged by adding
counts, and ranked in SQL. Expanding every hourly histogram of 30 days was
the cost of this path (22 million elements at 10 million rows).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from psycopg import sql

from probes.histogram import SQL_EDGES
from probes.metrics import PERCENTILES, REGION_CSV, latency_sql
from probes.models import HourlyRollup, Measurement
from probes.packed import entries_sql
from probes.readings.plan import (
    EPOCH,
    Coverage,
    coverage_of,
    head_hour,
    merge_intervals,
    raw_intervals,
    usable_cuts,
)
from probes.readings.plan import marks as plan_marks
from probes.readings.rank import reached_sql
from probes.readings.selection import Selection
from probes.readings.slots import started_in_literals
from probes.readings.workload import row_composed
from probes.rollups.periods import HOUR, ceil_hour, floor_hour, hour_runs

_EDGE_LITERAL = SQL_EDGES
# The statement's bucket-index columns, one per REGION_CSV metric x PERCENTILES, in the CSV's column order.
WIDTH = len(REGION_CSV) * len(PERCENTILES)


def plan_buckets(
    f: Selection,
    spans: list[tuple[datetime, datetime, datetime]],
    built: dict[datetime, datetime],
    cuts: dict[datetime, tuple[int, datetime]] | None = None,
) -> Coverage:
    """The hours, partial hours and raw intervals (tails among them) every bucket's own plan reads,
    together: each belongs to one bucket. cuts: usable_cuts of the selection (the current hour's, mostly).

    The first bucket's hour as read_window reads it (plan.coverage(head=True)): a selection starting before
    the middle of a marked hour whose raw rows are all kept reads that hour from its rollups less its rows
    before the selection (Coverage.head and minus), fewer rows than the ones inside it. built must then hold
    that hour's mark too (marks() reads it)."""
    whole = Coverage(since=f.since, until=f.until)
    raw: list[tuple] = []
    start = head_hour(f.since, f.until, built) if spans else None
    if start is not None:
        whole.head, whole.minus = (start, built[start]), [(start, f.since)]
    for i, (_label, a, b) in enumerate(spans):
        plan = coverage_of(a, b, built, cuts=cuts)
        whole.hours += plan.hours
        whole.partial.update(plan.partial)
        if i == 0 and start is not None:
            # The head hour covers the first bucket's rows up to its next hour.
            plan.raw = raw_intervals(a, b, plan.covered_hours | set(plan.partial) | {start})
        raw += plan.raw
        raw += plan.tails
    whole.raw = merge_intervals(sorted(raw, key=lambda interval: interval[0]))
    return whole


def marks(f: Selection) -> dict[datetime, datetime]:
    """The marks of the hours a plan_buckets of f may read: those inside it, and the one it starts in."""
    first, end = floor_hour(f.since), floor_hour(f.until)
    if first >= end:
        return {}
    return plan_marks(first, end)


def cuts(f: Selection) -> dict[datetime, tuple[int, datetime]]:
    """The unmarked hours starting inside the selection read from their rollups up to a cut (plan.usable_cuts):
    the current hour is the largest stretch of raw rows an export meets, every one of them bucketed and merged in
    SQL on each export before."""
    first = ceil_hour(f.since)
    if first >= f.until:
        return {}
    return usable_cuts(first, f.until)


def _narrow(alias: str, f: Selection, columns: tuple[str, ...]) -> list[sql.Composable]:
    values = {"target_id": f.target_ids, "probe_id": f.probe_ids, "region_id": f.region_ids}
    return [
        sql.SQL("{}.{} = ANY({})").format(sql.Identifier(alias), sql.Identifier(c), sql.Literal(list(values[c])))
        for c in columns
        if values[c]
    ]


def _of_probes(alias: str, probes: list[int]) -> sql.Composed:
    return sql.SQL("{}.probe_id = ANY({}::bigint[])").format(sql.Identifier(alias), sql.Literal(probes))


def _where(conds: list[sql.Composable]) -> sql.Composable:
    return sql.SQL(" AND ").join(conds) if conds else sql.SQL("TRUE")


def rollup_bucket_select(
    f: Selection, size: timedelta | None, plan: Coverage, rolled_probes: list[int] | None = None
) -> sql.Composed:
    """One SELECT: b, region_id, target_id, samples, errors, cells, ks. A group of one hourly row with stored
    cells has them in cells (HourlyRollup.percentile_cells) and NULL ks; every other group NULL cells and in ks
    a smallint[] of WIDTH histogram buckets (probes.histogram indexes), each REGION_CSV metric's PERCENTILES in
    that order, NULL where the group has no value of the metric (probes.significant.cells_sql writes them as
    the stored cells are written). Unordered. Literals only (COPY takes no parameters). plan: plan_buckets().

    f.workload narrows as read_window does (probes.readings.workload): the rollups to rolled_probes (required
    with a workload: the probes that have it now, among f's; an empty list reads no rollup at all), the rows
    taken away from the head hour (plan.minus) to the same probes, since those are the rows the rollups
    counted, and every other raw row by its own workload.

    The rollup rows are first read narrow (no histogram), to count each group's rows; only the groups that
    need a merge fetch their rows' histograms again, by id. Sorts and hashes here are over hundreds of
    thousands of narrow rows: give the statement a work_mem of tens of MB (probes.exports.regions does)."""
    ids = ("target_id", "probe_id", "region_id")
    if f.workload and rolled_probes is None:
        raise ValueError("a workload's rollups need rolled_probes (probes.readings.workload.probe_ids)")
    rolled_narrow = _narrow("r", f, ids)
    if f.workload:
        rolled_narrow = [*_narrow("r", f, ("target_id", "region_id")), _of_probes("r", rolled_probes or [])]
    # No probe has the workload now: no rollup counts it, so no row is taken away from one either.
    rolling = not f.workload or bool(rolled_probes)
    minus_intervals = plan.minus if rolling else []

    def bucket(column: sql.Composable) -> sql.Composable:
        if size is None:
            return sql.Literal(f.since)
        return sql.SQL("date_bin({}, {}, {})").format(sql.Literal(size), column, sql.Literal(EPOCH))

    hourly = sql.Identifier(HourlyRollup._meta.db_table)

    def rows_of(table: sql.Identifier, where: sql.Composable) -> sql.Composed:
        # The narrow columns of the rollup rows of `table` matching `where`, each in its bucket.
        return sql.SQL(
            "SELECT r.id, {b} AS b, r.region_id, r.target_id, r.samples, r.errors, "
            "r.percentile_cells AS cells FROM {table} r WHERE {where} AND {narrow}"
        ).format(
            b=bucket(sql.SQL("r.hour")),
            table=table,
            where=where,
            narrow=_where(rolled_narrow),
        )

    rolled: list[sql.Composable] = []
    # 1 h buckets: each marked hour is a bucket of its own, with no raw row in it, and an hourly
    # row with stored cells is the only row of its (hour, region, target) (HourlyRollup.percentile_cells), so it
    # is written as it is, read in hour order, without counting its group's rows first.
    alone: sql.Composable = sql.SQL("")
    if plan.hours and rolling:
        runs = sql.SQL(" OR ").join(
            sql.SQL("(r.hour >= {} AND r.hour < {})").format(sql.Literal(a), sql.Literal(b))
            for a, b in hour_runs(plan.hours)
        )
        narrow = _where(rolled_narrow)
        rest = sql.SQL("")
        if size == HOUR:
            alone = sql.SQL(
                "SELECT r.hour AS b, r.region_id, r.target_id, r.samples::bigint AS samples, "
                "r.errors::bigint AS errors, r.percentile_cells AS cells, NULL::smallint[] AS ks "
                "FROM {table} r WHERE ({runs}) AND r.percentile_cells IS NOT NULL AND {narrow} UNION ALL"
            ).format(table=hourly, runs=runs, narrow=narrow)
            rest = sql.SQL(" AND r.percentile_cells IS NULL")
        rolled.append(rows_of(hourly, sql.SQL("({}){}").format(runs, rest)))
    loose = sorted([*plan.partial, *([plan.head[0]] if plan.head else [])])
    if loose and rolling:
        # Partial hours (probes.readings.plan.Coverage.partial): their rollups count the rows up to a cut, the
        # rest are among the raw rows (a tail); and the head hour, whose rows before the selection are taken
        # away again (minus). So they are never written alone as the marked hours above are, unless a group has
        # no raw row with them.
        rolled.append(rows_of(hourly, sql.SQL("r.hour = ANY({})").format(sql.Literal(loose))))
    if not rolled:
        # No rollup inside the selection: an empty relation of the same shape keeps one statement.
        rolled.append(
            sql.SQL(
                "SELECT NULL::bigint AS id, NULL::timestamptz AS b, NULL::bigint AS region_id, "
                "NULL::bigint AS target_id, NULL::bigint AS samples, NULL::bigint AS errors, "
                "NULL::text AS cells WHERE FALSE"
            )
        )
    values = sql.SQL(", ").join(
        sql.SQL("{} AS {}").format(sql.SQL(latency_sql(m.column, "m")), sql.Identifier(f"v{i}"))
        for i, m in enumerate(REGION_CSV)
    )

    def interval(a: datetime, b: datetime, cut: list) -> sql.Composable:
        conds = started_in_literals(a, b, "m")
        # A partial hour's tail: its rows above the cut its rollups count to.
        conds += [sql.SQL("m.id > {}").format(sql.Literal(c)) for c in cut]
        return sql.SQL("({})").format(sql.SQL(" AND ").join(conds))

    def any_of(parts: list[sql.Composable]) -> sql.Composable:
        return sql.SQL(" OR ").join(parts) if parts else sql.SQL("FALSE")

    minus = [interval(a, b, []) for a, b in minus_intervals]
    # A row of the head hour before the selection (plan.minus) counts -1: its hour's rollups hold it.
    sign = sql.SQL("CASE WHEN {} THEN -1 ELSE 1 END").format(any_of(minus)) if minus else sql.SQL("1")
    raw_narrow = _narrow("m", f, ids)
    if f.workload:
        own = sql.SQL("{} = {}").format(row_composed("m"), sql.Literal(f.workload))
        if minus:
            raw_narrow.append(
                sql.SQL("CASE WHEN {} THEN {} ELSE {} END").format(
                    any_of(minus), _of_probes("m", rolled_probes or []), own
                )
            )
        else:
            raw_narrow.append(own)
    raw = sql.SQL(
        "SELECT {b} AS b, m.region_id, m.target_id, m.outcome, {values}, {sign} AS sign FROM {table} m "
        "WHERE ({intervals}) AND {narrow}"
    ).format(
        b=bucket(sql.SQL("m.started_at")),
        values=values,
        sign=sign,
        table=sql.Identifier(Measurement._meta.db_table),
        # An interval (start, end, cut) is a partial hour's tail.
        intervals=any_of([*(interval(r[0], r[1], list(r[2:])) for r in plan.raw), *minus]),
        narrow=_where(raw_narrow),
    )
    n = len(REGION_CSV)
    hist_pairs = sql.SQL(", ").join(
        sql.SQL("({}, x.{})").format(sql.Literal(i), sql.Identifier(str(m.rollup_field)))
        for i, m in enumerate(REGION_CSV)
    )
    value_pairs = sql.SQL(", ").join(
        sql.SQL("({}, m.{})").format(sql.Literal(i), sql.Identifier(f"v{i}")) for i in range(n)
    )
    picks = sql.SQL(", ").join(
        sql.SQL(f"min(k) FILTER (WHERE i = {i} AND {reached_sql(q, 'c', 't')})")
        for i in range(n)
        for q in PERCENTILES.values()
    )

    def expanded(table: sql.Identifier) -> sql.Composed:
        # A merged group's rollup rows, their histograms fetched by id and expanded into (metric, bucket, count).
        return sql.SQL(
            "SELECT u.b, u.region_id, u.target_id, h.i, e.bucket AS k, e.n "
            "FROM slow u JOIN {table} x ON x.id = u.id "
            "CROSS JOIN LATERAL (VALUES {pairs}) AS h(i, hist) CROSS JOIN LATERAL {entries} e"
        ).format(table=table, pairs=hist_pairs, entries=sql.SQL(entries_sql("h.hist")))

    return sql.SQL(
        """WITH rolled AS ({rolled}),  -- read once, by units: inlined, not written to a tuplestore first
        raw AS MATERIALIZED ({raw}),
        -- Every rollup row and every group of raw rows, with how many of them make its (bucket, region,
        -- target): a window over them rather than a GROUP BY joined back, so the many groups of one row
        -- are never joined.
        units AS MATERIALIZED (
            SELECT *, count(*) OVER (PARTITION BY b, region_id, target_id) AS parts
            FROM (SELECT id, b, region_id, target_id, samples, errors, cells FROM rolled
                  UNION ALL
                  SELECT NULL, b, region_id, target_id, sum(sign),
                         coalesce(sum(sign) FILTER (WHERE outcome <> 'ok'), 0), NULL
                  FROM raw GROUP BY b, region_id, target_id) u
        ),
        -- One hourly row alone in its group writes its stored cells (NULL: built before they were); every
        -- other group is merged.
        slow AS MATERIALIZED (SELECT * FROM units WHERE NOT (parts = 1 AND cells IS NOT NULL)),
        pairs AS (
            {hourly_pairs}
            UNION ALL
            SELECT m.b, m.region_id, m.target_id, x.i, width_bucket(x.v, {edges}), m.sign
            FROM raw m CROSS JOIN LATERAL (VALUES {value_pairs}) AS x(i, v)
            WHERE x.v IS NOT NULL
        ),
        merged AS (
            -- A bucket whose rows were all taken away again (minus) has none.
            SELECT b, region_id, target_id, i, k, sum(n)::bigint AS n FROM pairs GROUP BY 1, 2, 3, 4, 5
            HAVING sum(n) <> 0
        ),
        cum AS (
            SELECT b, region_id, target_id, i, k,
                   (sum(n) OVER (PARTITION BY b, region_id, target_id, i ORDER BY k))::bigint AS c,
                   (sum(n) OVER (PARTITION BY b, region_id, target_id, i))::bigint AS t
            FROM merged
        ),
        picks AS (
            SELECT b, region_id, target_id, ARRAY[{picks}]::smallint[] AS ks FROM cum GROUP BY 1, 2, 3
        ),
        totals AS (
            SELECT b, region_id, target_id, sum(samples)::bigint AS samples, sum(errors)::bigint AS errors
            FROM slow GROUP BY 1, 2, 3 HAVING sum(samples) > 0
        )
        {alone}
        SELECT b, region_id, target_id, samples, errors, cells, NULL::smallint[] AS ks FROM units
        WHERE parts = 1 AND cells IS NOT NULL
        UNION ALL
        SELECT g.b, g.region_id, g.target_id, g.samples, g.errors, NULL::text, p.ks
        FROM totals g
        LEFT JOIN picks p ON p.b = g.b AND p.region_id = g.region_id AND p.target_id = g.target_id"""
    ).format(
        rolled=sql.SQL(" UNION ALL ").join(rolled),
        alone=alone,
        raw=raw,
        hourly_pairs=expanded(hourly),
        edges=sql.Literal(_EDGE_LITERAL),
        value_pairs=value_pairs,
        picks=picks,
    )
