"""Reading rollup rows: merged counts and histograms of the hourly,
series and region rollups a plan uses, and the time series' rolled-up
buckets; either way each group's rows' histograms come back as stored
(probes.packed), one after another in one bytea, and are merged (numpy) and
picked in Python.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
from django.db import connection

from probes.histogram import BUCKETS, SQL_EDGES, stored_percentiles
from probes.metrics import BY_NAME, latency_row_sql
from probes.models import HourlyRollup, Measurement, RegionRollup, SeriesRollup
from probes.packed import EMPTY_SQL, unpack
from probes.readings import side_by_side
from probes.readings.picks import merged_percentiles, parsed_entries
from probes.readings.plan import EPOCH, UNIX, Coverage
from probes.readings.slots import started_in_params
from probes.readings.workload import row_sql
from probes.rollups.periods import hour_runs, sample_seconds_sql


def ranges_sql(column: str, intervals: Iterable[tuple[datetime, datetime]], params: dict[str, Any], prefix: str) -> str:
    """(column in [a, b) or ...) with named parameters prefix<i>a/b."""
    parts = []
    for i, (a, b) in enumerate(intervals):
        params[f"{prefix}{i}a"], params[f"{prefix}{i}b"] = a, b
        parts.append(f"({column} >= %({prefix}{i}a)s AND {column} < %({prefix}{i}b)s)")
    return "(" + " OR ".join(parts) + ")"


def _hist_field(metric: str) -> str:
    """The rollup field holding a metric's histogram; only histogram metrics have one."""
    field = BY_NAME[metric].rollup_field
    if field is None:
        raise ValueError(f"{metric} has no histogram in the rollups")
    return field


def _in(column: str, values: list | None, params: list) -> str:
    if not values:
        return ""
    params.append(list(values))
    return f" AND {column} = ANY(%s)"


def _rollup_rows_sql(plan: Coverage, columns: list[str], narrow: dict[str, list | None]) -> tuple[str, list]:
    """One UNION ALL over the hourly, series and region rollup rows a
    plan uses (series blocks looked up in series_rollup_one_per_block).
    Region rollups merge every target and probe of a region, so a plan
    with blocks may narrow by region only."""
    parts: list[str] = []
    params: list[Any] = []
    select = ", ".join(columns)
    if plan.hours:
        runs = hour_runs(plan.hours)
        where = " OR ".join(["(hour >= %s AND hour < %s)"] * len(runs))
        for a, b in runs:
            params.extend([a, b])
        sql = f"SELECT {select} FROM {HourlyRollup._meta.db_table} WHERE ({where})"
        for column, values in narrow.items():
            sql += _in(column, values, params)
        parts.append(sql)
    if plan.spans:
        sql = (
            f"SELECT {select} FROM {SeriesRollup._meta.db_table} WHERE (span_hours, start) IN "
            "(SELECT * FROM unnest(%s::int[], %s::timestamptz[]))"
        )
        params.extend([[span for span, _ in plan.spans], [start for _, start in plan.spans]])
        for column, values in narrow.items():
            sql += _in(column, values, params)
        parts.append(sql)
    if plan.blocks:
        if any(values is not None for column, values in narrow.items() if column != "region_id"):
            raise ValueError("region rollups hold every target and probe: narrow them by region only")
        sql, block_params = _blocks_sql(select, plan.blocks)
        params.extend(block_params)
        parts.append(sql + _in("region_id", narrow.get("region_id"), params))
    return " UNION ALL ".join(parts), params


def _blocks_sql(select: str, blocks: list[tuple[int, datetime]]) -> tuple[str, list]:
    """The region rollup rows of some blocks: (span_hours, start) looked up
    in the table's unique index (region_rollup_one_per_block)."""
    sql = (
        f"SELECT {select} FROM {RegionRollup._meta.db_table} WHERE (span_hours, start) IN "
        "(SELECT * FROM unnest(%s::int[], %s::timestamptz[]))"
    )
    return sql, [[span for span, _ in blocks], [start for _, start in blocks]]


@dataclass(frozen=True)
class RolledCounts:
    """rollup_counts' answer, never changed once made (a cached one is shared): the groups in one order, their
    totals (an int64 row [samples, errors] each), and per metric the groups' histogram bucket counts in the same
    order: dense_counts' array (a row of BUCKETS int64 counts each), or, where the groups were too many for one
    array or a stored histogram was refused, a dict of the non-zero counts each."""

    groups: list[tuple]
    totals: np.ndarray
    hists: dict[str, np.ndarray | list[dict[int, int]]]

    @property
    def weight(self) -> int:
        """What merge_cache weighs it by: the buckets held, a dense row as a tenth of its length (its non-zero
        buckets are about a hundred, but the row holds them all)."""
        return sum(h.size // 10 if isinstance(h, np.ndarray) else sum(map(len, h)) for h in self.hists.values())


def rollup_counts(
    plan: Coverage, group_by: tuple[str, ...], narrow: dict[str, list | None], metrics: Iterable[str]
) -> RolledCounts:
    """Merged counts of the rollup rows a plan uses, per group: totals
    [samples, errors] and, per metric, histogram bucket counts (RolledCounts).

    One statement: each group's histograms of a metric come back as the
    rows' stored bytes one after another (histograms_sql), summed per bucket
    by numpy (merge_histograms). Summing them in SQL instead (every entry
    expanded, cast and grouped) cost much more, when they were stored as
    jsonb (docs/benchmarks.md, "Dashboard reads")."""
    metrics = list(metrics)
    if not (plan.hours or plan.blocks or plan.spans):
        return RolledCounts([], np.zeros((0, 2), dtype=np.int64), {})
    n = len(group_by)
    fields = [_hist_field(m) for m in metrics]
    rows_sql, params = _rollup_rows_sql(plan, [*group_by, "samples", "errors", *fields], narrow)
    g = ", ".join(group_by)
    arrays = "".join(f", {histograms_sql('r.' + f)}" for f in fields)
    with connection.cursor() as cur:
        if plan.hours:
            # Recent hourly rows lie scattered through the heap: every rebuild (the current hour's every few
            # minutes, a late row's) writes new row versions wherever there is room. The planner, seeing `hour`
            # in step with the heap (ANALYZE's correlation, true of the older hours), costs an index scan over an
            # hour range as if it read their pages in order, and then visits a page per row. A bitmap scan visits
            # each page once. Local to the read's transaction (plan.reporting_reads), and set back below.
            cur.execute("SET LOCAL enable_indexscan = off")
        cur.execute(f"SELECT {g}, sum(samples), sum(errors){arrays} FROM ({rows_sql}) r GROUP BY {g}", params)
        records = cur.fetchall()
        if plan.hours:
            cur.execute("SET LOCAL enable_indexscan TO DEFAULT")
    groups = [tuple(rec[:n]) for rec in records]
    totals = np.array([(int(rec[n]), int(rec[n + 1])) for rec in records], dtype=np.int64).reshape(-1, 2)
    hists: dict[str, np.ndarray | list[dict[int, int]]] = {}
    for k, metric in enumerate(metrics):
        datas = [rec[n + 2 + k] for rec in records]
        dense = dense_counts(datas)
        hists[metric] = dense if dense is not None else [merge_histograms(data) for data in datas]
    return RolledCounts(groups, totals, hists)


# Groups merged into one dense array at most (8 bytes x BUCKETS each, a bounded array); more are merged one by one.
DENSE_GROUPS_MAX = 4000


def dense_counts(datas: list[bytes | None]) -> np.ndarray | None:
    """Each histograms_sql value's histograms merged, as one row of BUCKETS int64 counts per value, all in one
    bincount; None when they are more than DENSE_GROUPS_MAX or one is not whole entries of the layout (then
    merge_histograms reads each, and refuses the bad one with its error)."""
    if len(datas) > DENSE_GROUPS_MAX:
        return None
    parsed = parsed_entries(datas)
    if parsed is None:
        return None
    group, index, count = parsed
    # Summed as int64 in place: bincount's float64 array of every bucket, converted afterwards, was two arrays of
    # N x BUCKETS to write, and a new process's first read paid for their fresh pages.
    summed = np.zeros(len(datas) * BUCKETS, dtype=np.int64)
    np.add.at(summed, group * BUCKETS + index, count)
    return summed.reshape(len(datas), BUCKETS)


def histograms_sql(column: str) -> str:
    """SQL aggregate: the stored histograms (probes.packed) of `column` of a group's rows, one after another in
    one bytea (merge_histograms); NULL for no rows."""
    return f"string_agg({column}, {EMPTY_SQL})"


def merge_histograms(data: bytes | None) -> dict[int, int]:
    """Counts per bucket index of a histograms_sql value (None: no rows): its histograms merged, in numpy
    (bincount over the entries' indexes, weighted by their counts)."""
    indexes, counts = unpack(data)
    if not len(indexes):
        return {}
    # Exact: float64 holds every integer count below 2**53.
    summed = np.bincount(indexes, weights=counts)
    nonzero = np.flatnonzero(summed)
    return dict(zip(nonzero.tolist(), summed[nonzero].astype(np.int64).tolist(), strict=True))


def _series_sql(
    table: str, time_column: str, at: str, hist: str, where: str, raw: tuple[str, str, str | None] | None = None
) -> tuple[str, str, str | None]:
    """The time series' statements over rollup rows of `table`: totals
    (bucket, region, samples, at); the rollup rows' histograms of the
    metric as stored, per bucket and region (histograms_sql); and, with raw,
    the raw rows' counts (bucket, region, histogram bucket, count).

    raw: (the metric's raw column, a WHERE over raw rows): those rows are
    counted into the same buckets too, each value into its histogram bucket
    (probes.histogram.SQL_EDGES) and at its started_at, as read_window adds
    a window's raw edges to its rollups' histograms.

    The histograms are merged and picked in Python (_run_series), from the
    rows' stored bytes gathered into one value per bucket and region (numpy
    reads them as they are): expanding every entry in SQL, sorting them
    and running two window sums over them for the nearest rank took longer
    for the same values (docs/benchmarks.md, "Dashboard reads")."""
    # Times come back as integers (a bucket's start in whole seconds, at in microseconds) and are made
    # datetimes in Python (_run_series): Django's timestamptz loader is Python, run once a value, and a 7-day
    # series of every target returns some 5,000 of them.
    bucket = f"extract(epoch FROM date_bin(%(size)s, r.{time_column}, %(origin)s))::int8"
    raw_bucket = "extract(epoch FROM date_bin(%(size)s, m.started_at, %(origin)s))::int8"
    raw_totals = ""
    raw_keys = None
    if raw is not None:
        column, raw_where, sign = raw
        # A row of a minus interval counts -1: the first hour's rows before the window, which its rollups hold.
        n, seconds = (
            (f"sum({sign})", f"sum({sign} * extract(epoch FROM m.started_at))")
            if sign
            else (
                "count(*)",
                "sum(extract(epoch FROM m.started_at))",
            )
        )
        raw_totals = f"""
            UNION ALL
            SELECT {raw_bucket}, m.region_id, {n}, {seconds}
            FROM {Measurement._meta.db_table} m WHERE {raw_where} GROUP BY 1, 2"""
        raw_keys = f"""
            SELECT {raw_bucket}, m.region_id, width_bucket(m.{column}, %(edges)s::float8[]), {n}
            FROM {Measurement._meta.db_table} m
            WHERE {raw_where} AND m.{column} IS NOT NULL AND {latency_row_sql("m")} GROUP BY 1, 2, 3"""
    # A bucket left with no row once the minus rows are taken away has no point.
    totals = f"""
        SELECT b, region_id, sum(samples)::bigint,
               (extract(epoch FROM to_timestamp(sum(seconds) / sum(samples))) * 1000000)::int8
        FROM (
            SELECT {bucket} AS b, r.region_id, sum(r.samples) AS samples, {at} AS seconds
            FROM {table} r WHERE {where} GROUP BY 1, 2{raw_totals}
        ) u
        GROUP BY 1, 2 HAVING sum(samples) > 0
    """
    # A bucket's histograms one after another, per bucket and region: one value each, not one per row.
    hists = (
        f"SELECT {bucket}, r.region_id, {histograms_sql('r.' + hist)} FROM {table} r "
        f"WHERE {where} AND r.{hist} <> {EMPTY_SQL} GROUP BY 1, 2"
    )
    return totals, hists, raw_keys


@dataclass(frozen=True)
class SeriesNarrow:
    """What else a time series reads besides its targets and regions: probes (None: every probe), a workload
    (empty: every workload) and, with a workload, the probes whose rollups it reads (those that now have it:
    probes.readings.workload; an empty list reads none). Raw rows are narrowed by their own workload, the rows
    taken away from a bucket's first hour (minus) by the rollups' probes, since those are the rows they counted."""

    probes: list[int] | None = None
    workload: str = ""
    workload_probes: list[int] | None = None

    @property
    def rolled(self) -> list[int] | None:
        """The probes whose rollups are read (None: every probe)."""
        return self.workload_probes if self.workload else self.probes


EVERY = SeriesNarrow()


def _raw_part(
    metric: str,
    raw: list[tuple],
    targets: list[int] | None,
    regions: list[int],
    params: dict[str, Any],
    minus: Sequence[tuple[datetime, datetime]] = (),
    narrow: SeriesNarrow = EVERY,
) -> tuple[str, str, str | None] | None:
    """_series_sql's raw argument for raw rows of the intervals, targets (None: every target, with no
    condition on them: see read_window) and regions (params filled in), those of `minus` counted -1 (the sign
    expression; None without minus), narrowed as `narrow` says."""
    if not raw and not minus:
        return None
    params["edges"] = SQL_EDGES
    params["raw_targets"], params["raw_regions"] = targets, regions
    where = (
        ("" if targets is None else "m.target_id = ANY(%(raw_targets)s) AND ")
        + "m.region_id = ANY(%(raw_regions)s) AND "
        + started_in_params([*raw, *minus], params, "raw", "m")
    )
    if narrow.probes:
        params["raw_probes"] = narrow.probes
        where += " AND m.probe_id = ANY(%(raw_probes)s)"
    if narrow.workload:
        params["raw_workload"], params["minus_probes"] = narrow.workload, narrow.rolled or []
        own = f"{row_sql('m')} = %(raw_workload)s"
        if minus:
            within = started_in_params(minus, params, "minus", "m")
            where += f" AND CASE WHEN {within} THEN m.probe_id = ANY(%(minus_probes)s) ELSE {own} END"
        else:
            where += f" AND {own}"
    sign = None
    if minus:
        sign = f"CASE WHEN {started_in_params(minus, params, 'minus', 'm')} THEN -1 ELSE 1 END"
    return BY_NAME[metric].column, where, sign


def _fetch_all(sql: str, params: dict[str, Any]) -> list[tuple]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows: list[tuple] = cur.fetchall()
        return rows


def _run_series(sqls: tuple[str, str, str | None], q: float, params: dict[str, Any]) -> list[tuple]:
    # Three statements over the same buckets, read side by side where the process allows (side_by_side).
    fetched = side_by_side.run([partial(_fetch_all, sql, params) for sql in sqls if sql is not None])
    totals = {(b, rid): (samples, at) for b, rid, samples, at in fetched[0]}
    stored = {(b, rid): data for b, rid, data in fetched[1]}
    raw: dict[tuple, dict[int, int]] = defaultdict(dict)
    for b, rid, k, n in fetched[2] if len(fetched) > 2 else ():
        raw[(b, rid)][k] = n
    qs = (0.5, 0.95, q)
    picks: dict[tuple, list[float | None]] = {}
    for key in totals:
        data = stored.get(key)
        # A bucket of one stored histogram (a region block, mostly) is picked from it as stored; so is one of
        # several whose entries happen to ascend all through (their buckets then never repeat).
        if data is not None and key not in raw:
            picked = stored_percentiles(*unpack(data), *qs)
            if picked is not None:
                picks[key] = picked
    # The others merged and picked all at once (picks.py).
    merged = [key for key in totals if key not in picks]
    found = merged_percentiles([stored.get(key) for key in merged], [raw.get(key) for key in merged], qs)
    picks.update(zip(merged, found, strict=True))
    rows = []
    starts: dict[int, datetime] = {}
    for key, (samples, at) in totals.items():
        start = starts.get(key[0]) or starts.setdefault(key[0], datetime.fromtimestamp(key[0], UTC))
        rows.append((start, key[1], samples, *picks[key], UNIX + timedelta(microseconds=at)))
    return rows


def rollup_series(
    metric: str,
    q: float,
    size: timedelta,
    hours: Iterable[datetime],
    targets: list[int],
    regions: list[int],
    raw: Sequence[tuple] = (),
    minus: Sequence[tuple[datetime, datetime]] = (),
    blocks: Sequence[tuple[int, datetime]] = (),
    narrow: SeriesNarrow = EVERY,
) -> list[tuple]:
    """(bucket, region_id, samples, p50, p95, q-quantile, at) from hourly
    rollups (see _series_sql) and the series blocks inside a day of `blocks` ((span in hours, start), each inside
    one time bucket: probes.rollups.hour_blocks), and the raw rows of `raw` counted into the
    same buckets, those of `minus` taken away. at: the mean of the hours' midpoints weighted by their
    samples (a rollup keeps no finer time; a block's sample_seconds holds that sum over its hours), and of the raw
    rows' started_at; series() clips it to the bucket's part inside the window. narrow: probes and workload
    (SeriesNarrow)."""
    params = {"size": size, "origin": EPOCH, "targets": targets, "regions": regions, "probes": narrow.rolled}
    # An empty list of probes reads no rollup (a workload no probe has now), None every probe's.
    by_probe = "" if narrow.rolled is None else " AND {}.probe_id = ANY(%(probes)s)"
    hist = _hist_field(metric)
    runs = hour_runs(hours)
    # The two tables' rows as one relation r of (region_id, t, samples, seconds, the histogram); with one part
    # alone PostgreSQL pulls the subquery up, so a read of hours only is planned as a plain read of hourly rows.
    # seconds are whole numbers below 2 ** 53 in float8 from either table, so a bucket's sum, and its `at`, is
    # the same to the microsecond whichever rows it was read from.
    parts = []
    if runs or not blocks:
        ranges = ranges_sql("h.hour", runs, params, "h") if runs else "FALSE"
        parts.append(
            "SELECT h.region_id, h.hour AS t, h.samples, "
            f"({sample_seconds_sql('h')})::float8 AS seconds, h.{hist} "
            f"FROM {HourlyRollup._meta.db_table} h "
            f"WHERE h.target_id = ANY(%(targets)s) AND h.region_id = ANY(%(regions)s) AND {ranges}"
            + by_probe.format("h")
        )
    if blocks:
        params["spans"], params["starts"] = [span for span, _ in blocks], [start for _, start in blocks]
        # Looked up in series_rollup_one_per_block.
        parts.append(
            f"SELECT s.region_id, s.start AS t, s.samples, s.sample_seconds AS seconds, s.{hist} "
            f"FROM {SeriesRollup._meta.db_table} s "
            "WHERE (s.span_hours, s.start) IN (SELECT * FROM unnest(%(spans)s::int[], %(starts)s::timestamptz[])) "
            "AND s.target_id = ANY(%(targets)s) AND s.region_id = ANY(%(regions)s)" + by_probe.format("s")
        )
    rows = "(" + " UNION ALL ".join(parts) + ")"
    raw_part = _raw_part(metric, list(raw), targets, regions, params, minus, narrow)
    sqls = _series_sql(rows, "t", "sum(r.seconds)", hist, "TRUE", raw_part)
    return _run_series(sqls, q, params)


def region_series(
    metric: str,
    q: float,
    size: timedelta,
    blocks: list[tuple[int, datetime]],
    regions: list[int],
    raw: Sequence[tuple] = (),
    minus: Sequence[tuple[datetime, datetime]] = (),
) -> list[tuple]:
    """rollup_series for every target: the same rows, merged from region
    rollup blocks (each inside one time bucket) instead of every probe's
    hourly rows; at comes from the blocks' sample_seconds, the same
    samples-weighted mean of hour midpoints. raw: as rollup_series', of
    every target."""
    params: dict[str, Any] = {
        "size": size,
        "origin": EPOCH,
        "regions": regions,
        "spans": [span for span, _ in blocks],
        "starts": [start for _, start in blocks],
    }
    # The blocks looked up in the unique index (region_rollup_one_per_block).
    where = (
        "(r.span_hours, r.start) IN (SELECT * FROM unnest(%(spans)s::int[], %(starts)s::timestamptz[])) "
        "AND r.region_id = ANY(%(regions)s)"
    )
    at = "sum(r.sample_seconds)"
    raw_part = _raw_part(metric, list(raw), None, regions, params, minus)
    sqls = _series_sql(RegionRollup._meta.db_table, "start", at, _hist_field(metric), where, raw_part)
    return _run_series(sqls, q, params)
