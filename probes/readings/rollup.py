"""Reading rollup rows: merged counts and histograms of the hourly and
daily rollups a plan uses, summed in SQL so Python never parses the JSON of
hundreds of rows; and the time series' rolled-up buckets, whose
nearest-rank bucket is picked in SQL too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from probes.histogram import bucket_value
from probes.metrics import BY_NAME
from probes.models import DailyRollup, HourlyRollup
from probes.readings.plan import EPOCH, Coverage
from probes.readings.rank import exact, rank_sql
from probes.rollups.periods import HOUR, hour_runs


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
    """One UNION ALL over the hourly and daily rollup rows a plan uses."""
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
    if plan.days:
        params.append(list(plan.days))
        sql = f"SELECT {select} FROM {DailyRollup._meta.db_table} WHERE day = ANY(%s)"
        for column, values in narrow.items():
            sql += _in(column, values, params)
        parts.append(sql)
    return " UNION ALL ".join(parts), params


def rollup_counts(
    plan: Coverage, group_by: tuple[str, ...], narrow: dict[str, list | None], metrics: Iterable[str]
) -> tuple[dict[tuple, list], dict[tuple, dict[str, dict[int, int]]]]:
    """Merged counts of the rollup rows a plan uses, per group: totals
    [samples, errors] and, per metric,
    histogram bucket counts. Summed in SQL, so Python never parses the JSON
    of hundreds of rows: only one (group, metric, bucket) row comes back per
    occupied bucket."""
    totals: dict[tuple, list] = {}
    buckets: dict[tuple, dict[str, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    if not (plan.hours or plan.days):
        return totals, buckets
    metrics = list(metrics)
    g = ", ".join(group_by)
    n = len(group_by)
    rows_sql, params = _rollup_rows_sql(plan, [*group_by, "samples", "errors"], narrow)
    with connection.cursor() as cur:
        cur.execute(f"SELECT {g}, sum(samples), sum(errors) FROM ({rows_sql}) r GROUP BY {g}", params)
        for rec in cur.fetchall():
            totals[tuple(rec[:n])] = [int(rec[n]), int(rec[n + 1])]
        if metrics:
            rows_sql, params = _rollup_rows_sql(plan, [*group_by, *[_hist_field(m) for m in metrics]], narrow)
            pairs = ", ".join(f"('{m}', r.{_hist_field(m)})" for m in metrics)
            cur.execute(
                f"SELECT {', '.join('r.' + c for c in group_by)}, m.metric, e.key::int, sum(e.value::bigint)::bigint "
                f"FROM ({rows_sql}) r "
                f"CROSS JOIN LATERAL (VALUES {pairs}) AS m(metric, hist) "
                "CROSS JOIN LATERAL jsonb_each_text(m.hist) e "
                f"GROUP BY {', '.join('r.' + c for c in group_by)}, m.metric, e.key",
                params,
            )
            for rec in cur.fetchall():
                metric, index, count = rec[n:]
                buckets[tuple(rec[:n])][metric][index] = count
    return totals, buckets


def rollup_series(
    metric: str, q: float, size: timedelta, hours: Iterable[datetime], targets: list[int], regions: list[int]
) -> list[tuple]:
    """(bucket, region_id, samples, p50, p95, q-quantile, at) from hourly
    rollups. The histograms are merged per bucket and the nearest-rank
    bucket picked in SQL, so only one row per bucket and region comes back
    instead of every occupied histogram bucket. at: the mean of the hours'
    midpoints weighted by their samples (a rollup keeps no finer time);
    series() clips it to the bucket's part inside the window."""
    table = HourlyRollup._meta.db_table
    params = {"size": size, "origin": EPOCH, "targets": targets, "regions": regions, "half": HOUR / 2}
    ranges = ranges_sql("hour", hour_runs(hours), params, "h")
    where = f"target_id = ANY(%(targets)s) AND region_id = ANY(%(regions)s) AND {ranges}"
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT date_bin(%(size)s, hour, %(origin)s) AS b, region_id, sum(samples)::bigint,
                   to_timestamp(sum(samples * extract(epoch FROM hour + %(half)s)) / sum(samples))
            FROM {table} WHERE {where} GROUP BY 1, 2
            """,
            params,
        )
        totals = {(b, rid): (samples, at) for b, rid, samples, at in cur.fetchall()}
        params.update(q50=exact(0.5), q95=exact(0.95), q=exact(q))
        cur.execute(
            f"""
            WITH pairs AS (
                SELECT date_bin(%(size)s, h.hour, %(origin)s) AS b, h.region_id, e.key::int AS k,
                       sum(e.value::bigint) AS n
                FROM {table} h CROSS JOIN LATERAL jsonb_each_text(h.{_hist_field(metric)}) e
                WHERE {where}
                GROUP BY 1, 2, 3
            ), cum AS (
                SELECT b, region_id, k,
                       sum(n) OVER (PARTITION BY b, region_id ORDER BY k) AS c,
                       sum(n) OVER (PARTITION BY b, region_id) AS t
                FROM pairs
            )
            SELECT b, region_id,
                   min(k) FILTER (WHERE c >= {rank_sql("%(q50)s", "t")}),
                   min(k) FILTER (WHERE c >= {rank_sql("%(q95)s", "t")}),
                   min(k) FILTER (WHERE c >= {rank_sql("%(q)s", "t")})
            FROM cum GROUP BY 1, 2
            """,
            params,
        )
        picks = {(b, rid): ks for b, rid, *ks in cur.fetchall()}
    rows = []
    for key, (samples, at) in totals.items():
        values = [bucket_value(k) if k is not None else None for k in picks.get(key, (None, None, None))]
        rows.append((key[0], key[1], samples, *values, at))
    return rows
