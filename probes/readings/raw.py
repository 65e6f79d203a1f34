"""Reading raw measurements: rows into Readings (exact values kept on
request), the time series' raw buckets, and the regions.csv statement for
exports no rollup can serve. Every percentile here is the exact nearest
rank of probes.readings.rank.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from itertools import accumulate, pairwise

import numpy as np
from django.db import connection
from psycopg import sql

from probes.histogram import SQL_EDGES, Histogram, histograms_of_runs
from probes.metrics import BY_NAME, PERCENTILES, REGION_CSV, latency_row_sql, latency_sql
from probes.models import Measurement
from probes.readings.plan import EPOCH
from probes.readings.rank import exact, rank_sql
from probes.readings.rows import Reading
from probes.readings.selection import RAW_MAX
from probes.readings.slots import started_in_literals, started_in_params
from probes.readings.workload import row_composed, row_sql


def narrowed(column: str, alias: str = "") -> str:
    """A narrow's column as SQL: a column itself, but workload as the row's workload with NULL read as short
    (probes.readings.workload)."""
    if column == "workload":
        return row_sql(alias)
    return f"{alias}.{column}" if alias else column


def read_raw(
    out: dict[tuple, Reading],
    intervals: list[tuple],
    group_by: tuple[str, ...],
    narrow: dict[str, list | None],
    metrics: tuple[str, ...],
    raw_values: tuple[str, ...] = (),
) -> None:
    """Add the raw rows of the given intervals to the readings in `out`. narrow: column -> values (none or empty:
    all), workload among the columns (narrowed).

    Intervals of at most VALUES_MAX in all (a raw window; a long window's
    raw edges: its first partial hour and the current one), and any with
    raw_values, come back as each group's values, in bytes
    (_read_raw_values): 8 bytes a value to send. Longer ones
    (hours not rolled up yet, after an outage or on a new installation) are
    counted into histogram buckets in SQL (the rollups' width_bucket over
    probes.histogram.SQL_EDGES, which is bucket_index exactly), so only one
    row per (group, metric, bucket) comes back, however many rows they hold.
    On a raw window, reading the values took less time than counting them
    in SQL (docs/benchmarks.md, "Dashboard reads")."""
    if not intervals:
        return
    if raw_values or sum((b - a for a, b, *_ in intervals), timedelta(0)) <= VALUES_MAX:
        _read_raw_values(out, intervals, group_by, narrow, metrics, raw_values)
        return
    params: dict = {"edges": SQL_EDGES}
    where = [started_in_params(intervals, params, "r")]
    for column, values in narrow.items():
        if values:
            params[f"in_{column}"] = list(values)
            where.append(f"{narrowed(column)} = ANY(%(in_{column})s)")
    g = ", ".join(group_by)
    n = len(group_by)
    table = Measurement._meta.db_table
    # One scan: each row counted once as itself (metric -1: samples and errors) and once per metric with a
    # value (its bucket). Two statements, one for the counts and one for the buckets, read the same rows
    # twice, and at 100 M rows a long window's raw edges are most of an every-target read.
    samples = [f"({i}, {latency_sql(BY_NAME[m].column)})" for i, m in enumerate(metrics)]
    pairs = ", ".join(["(-1, NULL::float8)", *samples])
    counts: dict[tuple, dict[int, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {g}, v.i, width_bucket(v.x, %(edges)s::float8[]), count(*),"
            f" count(*) FILTER (WHERE outcome <> 'ok') FROM {table}"
            f" CROSS JOIN LATERAL (VALUES {pairs}) AS v(i, x)"
            f" WHERE {' AND '.join(where)} AND (v.i < 0 OR v.x IS NOT NULL) GROUP BY {g}, {n + 1}, {n + 2}",
            params,
        )
        for rec in cur.fetchall():
            i, index, count, errors = rec[n:]
            if i < 0:
                r = out[tuple(rec[:n])]
                r.samples += count
                r.errors += errors
            else:
                counts[tuple(rec[:n])][i][index] = count
    for group, by_metric in counts.items():
        r = out[group]
        for i, buckets in by_metric.items():
            r.hists[metrics[i]].merge(Histogram(buckets))


# Raw intervals read as values at most, in all (read_raw): a raw window's longest.
VALUES_MAX = RAW_MAX


def _read_raw_values(
    out: dict[tuple, Reading],
    intervals: list[tuple],
    group_by: tuple[str, ...],
    narrow: dict[str, list | None],
    metrics: tuple[str, ...],
    raw_values: tuple[str, ...],
) -> None:
    """read_raw as values: one statement gathers each group's values of every column it needs into one run of
    bytes (each column once, whether for a histogram, for raw_values or both); numpy reads the runs, buckets
    them (histograms_of_runs: every group's run of a column at once) and keeps each raw_values run, sorted, as
    its group's values. Reading the rows themselves through the ORM, one Python tuple each, was most of a raw
    window's cost."""
    if not intervals:
        return
    columns = list(dict.fromkeys([*(BY_NAME[m].column for m in metrics), *raw_values]))
    params: dict = {}
    where = [started_in_params(intervals, params, "r")]
    for column, values in narrow.items():
        if values:
            params[f"in_{column}"] = list(values)
            where.append(f"{narrowed(column)} = ANY(%(in_{column})s)")
    g = ", ".join(group_by)
    n = len(group_by)
    # Each value as its 8 bytes (float8send: big-endian, bit for bit), one run per group and column, read by
    # numpy as they are: parsing the values' text took longer than the rest. Sorted in numpy, not by ORDER BY
    # in the aggregates, which rules out hashing the groups: the rows were sorted by group first (on disk, for
    # a raw window of every target), then each group's values once per column.
    sample = latency_row_sql()
    gathered = ", ".join(
        f"string_agg(float8send({c}), ''::bytea) FILTER (WHERE {c} IS NOT NULL AND {sample})" for c in columns
    )
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {g}, count(*), count(*) FILTER (WHERE outcome <> 'ok'), {gathered}"
            f" FROM {Measurement._meta.db_table} WHERE {' AND '.join(where)} GROUP BY {g}",
            params,
        )
        records = cur.fetchall()
    by_column = {BY_NAME[m].column: m for m in metrics}
    readings = [out[tuple(rec[:n])] for rec in records]
    for r, rec in zip(readings, records, strict=True):
        r.samples += rec[n]
        r.errors += rec[n + 1]
    for k, column in enumerate(columns):
        # Every group's run of this column at once (histograms_of_runs), then cut back into groups.
        runs = [rec[n + 2 + k] or b"" for rec in records]
        lengths = [len(run) // 8 for run in runs]
        found = np.frombuffer(b"".join(runs), dtype=">f8").astype(np.float64)
        kept = column in raw_values
        cuts = list(pairwise([0, *accumulate(lengths)]))
        if kept:
            # Each run ascending: what exact_percentile's sort then finds in order, and what histograms_of_runs
            # counts without sorting again.
            for a, b in cuts:
                found[a:b].sort()
        metric = by_column.get(column)
        if metric is not None:
            histograms = histograms_of_runs(found, lengths, ascending=kept)
            for r, length, histogram in zip(readings, lengths, histograms, strict=True):
                if length:
                    r.hists[metric].merge(histogram)
        if kept:
            listed = found.tolist()
            for r, (a, b) in zip(readings, cuts, strict=True):
                if b > a:
                    r.values.setdefault(column, []).extend(listed[a:b])


def raw_series(
    metric: str,
    q: float,
    size: timedelta,
    intervals: Iterable[tuple[datetime, datetime]],
    targets: list[int] | None,
    regions: list[int],
    probes: list[int] | None = None,
    workload: str = "",
) -> list[tuple]:
    """(bucket, region_id, samples, p50, p95, q-quantile, at) from raw rows,
    grouped in SQL; exact nearest rank (probes.readings.rank). at: the mean
    started_at of the bucket's rows. targets None: every target, with no
    condition on them (see window.read_window). probes: these probes only
    (None or empty: all); workload: rows of this workload only (empty: all)."""
    column = latency_sql(BY_NAME[metric].column)
    params = {
        "size": size,
        "origin": EPOCH,
        "targets": targets,
        "regions": regions,
        "probes": probes,
        "workload": workload,
        "q50": exact(0.5),
        "q95": exact(0.95),
        "q": exact(q),
    }
    ranges = started_in_params(intervals, params, "r")
    by_target = "" if targets is None else "target_id = ANY(%(targets)s) AND "
    if probes:
        by_target += "probe_id = ANY(%(probes)s) AND "
    if workload:
        by_target += f"{row_sql()} = %(workload)s AND "
    picks = ", ".join(f"vals[{rank_sql(f'%({name})s', 'n')}]" for name in ("q50", "q95", "q"))
    sql = f"""
        SELECT b, region_id, samples, {picks}, to_timestamp(at)
        FROM (
            SELECT date_bin(%(size)s, started_at, %(origin)s) AS b, region_id, count(*) AS samples,
                   count({column}) AS n,
                   array_agg({column} ORDER BY {column}) FILTER (WHERE {column} IS NOT NULL) AS vals,
                   avg(extract(epoch FROM started_at)) AS at
            FROM {Measurement._meta.db_table}
            WHERE {by_target}region_id = ANY(%(regions)s) AND {ranges}
            GROUP BY 1, 2
        ) s
    """
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows: list[tuple] = cur.fetchall()
        return rows


def bucket_select(
    since: datetime,
    until: datetime,
    size: timedelta | None,
    narrow: dict[str, list],
) -> sql.Composed:
    """One SELECT over raw rows of [since, until), per time bucket (date_bin
    of `size` from EPOCH; None: one bucket labelled `since`) x region x
    target: b, region_id, target_id, samples, errors, error_rate, then for
    each probes.metrics.REGION_CSV metric its PERCENTILES, exact nearest
    rank. Literals, not parameters: the statement is run under COPY, which
    takes none. narrow: column -> values (target_id, probe_id, region_id,
    outcome, workload: the row's own, NULL read as short); an empty list
    means all.

    Memory: each group's values are gathered in a sorted array to pick ranks
    from (what percentile_disc sorted too, minus its float rank). Aggregates
    with ORDER BY rule out hash aggregation, so PostgreSQL holds one group at
    a time: at most one region x target's values over one bucket."""
    bucket: sql.Composable
    if size is None:
        bucket = sql.Literal(since)
    else:
        bucket = sql.SQL("date_bin({}, m.started_at, {})").format(sql.Literal(size), sql.Literal(EPOCH))
    conds = started_in_literals(since, until, "m")
    for column, values in narrow.items():
        if values:
            expr = row_composed("m") if column == "workload" else sql.SQL("m.{}").format(sql.Identifier(column))
            conds.append(sql.SQL("{} = ANY({})").format(expr, sql.Literal(list(values))))
    aggregates, picks = [], []
    for metric in REGION_CSV:
        col = sql.SQL(latency_sql(metric.column, "m"))
        n, vals = sql.Identifier(f"{metric.name}_n"), sql.Identifier(f"{metric.name}_v")
        aggregates.append(
            sql.SQL("count({c}) AS {n}, array_agg({c} ORDER BY {c}) FILTER (WHERE {c} IS NOT NULL) AS {v}").format(
                c=col, n=n, v=vals
            )
        )
        for q in PERCENTILES.values():
            rank = rank_sql("{q}", "g.{n}")  # placeholders of the sql.SQL template
            picks.append(sql.SQL("g.{v}[" + rank + "]").format(v=vals, q=sql.Literal(exact(q)), n=n))
    return sql.SQL(
        "SELECT g.b, g.region_id, g.target_id, g.samples, g.errors, g.errors::float8 / g.samples, {picks} "
        "FROM (SELECT {bucket} AS b, m.region_id, m.target_id, count(*) AS samples, "
        "count(*) FILTER (WHERE m.outcome <> 'ok') AS errors, {aggregates} "
        "FROM {table} m WHERE {where} GROUP BY 1, 2, 3) g"
    ).format(
        picks=sql.SQL(", ").join(picks),
        bucket=bucket,
        aggregates=sql.SQL(", ").join(aggregates),
        table=sql.Identifier(Measurement._meta.db_table),
        where=sql.SQL(" AND ").join(conds),
    )
