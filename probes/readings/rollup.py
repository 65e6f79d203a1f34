"""Reading rollup rows: merged counts and histograms of the hourly, daily,
series and region rollups a plan uses, and the time series' rolled-up
buckets; either way each group's rows' histograms come back as their stored
jsonb text, gathered into one JSON array, and are merged (numpy) and picked
in Python.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
from django.db import connection

from probes.histogram import SQL_EDGES, stored_percentiles
from probes.metrics import BY_NAME
from probes.models import DailyRollup, HourlyRollup, Measurement, RegionRollup, SeriesRollup
from probes.readings import side_by_side
from probes.readings.picks import merged_percentiles
from probes.readings.plan import EPOCH, UNIX, Coverage
from probes.readings.slots import started_in_params
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
    """One UNION ALL over the hourly, daily, series and region rollup rows a
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
    if plan.days:
        params.append(list(plan.days))
        sql = f"SELECT {select} FROM {DailyRollup._meta.db_table} WHERE day = ANY(%s)"
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


def rollup_counts(
    plan: Coverage, group_by: tuple[str, ...], narrow: dict[str, list | None], metrics: Iterable[str]
) -> tuple[dict[tuple, list], dict[tuple, dict[str, dict[int, int]]]]:
    """Merged counts of the rollup rows a plan uses, per group: totals
    [samples, errors] and, per metric, histogram bucket counts.

    One statement: each group's histograms of a metric come back as the
    text of one JSON array of the rows' stored jsonb (histograms_sql), read
    and summed per bucket by numpy (merge_histograms).
    Summing them in SQL instead (every entry expanded with jsonb_each_text,
    cast and grouped) cost two to three times as much at 10 M rows, cold:
    the days of the table of every target over 30 days, 4,500 series and
    daily rows of about 55 entries each, 300 against 130 ms; the same
    counts."""
    totals: dict[tuple, list] = {}
    buckets: dict[tuple, dict[str, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    if not (plan.hours or plan.days or plan.blocks or plan.spans):
        return totals, buckets
    metrics = list(metrics)
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
            # each page once: the table of every target over 24 h at 10 M rows, a median 151 against 83 ms in
            # process. Local to the read's transaction (plan.reporting_reads), and set back below.
            cur.execute("SET LOCAL enable_indexscan = off")
        cur.execute(f"SELECT {g}, sum(samples), sum(errors){arrays} FROM ({rows_sql}) r GROUP BY {g}", params)
        records = cur.fetchall()
        if plan.hours:
            cur.execute("SET LOCAL enable_indexscan TO DEFAULT")
        for rec in records:
            group = tuple(rec[:n])
            totals[group] = [int(rec[n]), int(rec[n + 1])]
            for metric, text in zip(metrics, rec[n + 2 :], strict=True):
                counts = merge_histograms(text)
                if counts:
                    buckets[group][metric] = counts
    return totals, buckets


def histograms_sql(column: str) -> str:
    """SQL aggregate: the histograms of `column` (jsonb, in Histogram.to_sparse's {"index": count} form) of a
    group's rows, as the text of one JSON array of them (merge_histograms)."""
    return f"'[' || string_agg({column}::text, ',') || ']'"


# {"12": 3, "15": 1} to [12, 3, 15, 1]: keys and counts are digits, so once the quotes are gone json.loads reads
# them as ints, in C, and no int() per entry is left to Python. On the bytes, where translate is a table lookup
# (in SQL, translate() cost more than the statement it was in).
_FLAT = bytes.maketrans(b"{}:", b"[],")


def _flat_lists(text: str | None) -> list[list[int]]:
    """The histograms of a histograms_sql value (None: no rows), each as its flat [index, count, ...] list."""
    return [] if text is None else json.loads(text.encode().translate(_FLAT, b'"'))


def _merged(lists: list[list[int]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    get = counts.get
    for flat in lists:
        # Index, then count: one iterator read in pairs, no slices copied (a third faster on the 250,000
        # entries of a 30-day table of every target).
        pairs = iter(flat)
        for k in pairs:
            counts[k] = get(k, 0) + next(pairs)
    return counts


# {"12": 3, "15": 1},{"3": 2} to 12,3,15,1,3,2: the braces, brackets, quotes and spaces dropped and each colon
# made a comma, on the bytes (translate is a table lookup, in C).
_COLONS = bytes.maketrans(b":", b",")
_NOT_NUMBERS = b'{}[]" '


def merge_histograms(text: str | None) -> dict[int, int]:
    """Counts per bucket index of a histograms_sql value (None: no rows): its histograms merged.

    numpy reads the text as one run of index, count pairs (fromstring) and sums the counts per index (bincount),
    both in C: on the 1,800 texts (430,000 entries) of the table of every target over 30 days, a median 45 against
    85 ms for json.loads and a dict summed in Python (_merged), which stays the path for text this one does not
    read whole."""
    if text is None:
        return {}
    # An empty histogram ({}) would leave an empty field between two commas.
    data = text.replace("{}", "").encode().translate(_COLONS, _NOT_NUMBERS).replace(b",,", b",").strip(b",")
    if not data:
        return {}
    try:
        values = np.fromstring(data, dtype=np.int64, sep=",")
    except ValueError:
        values = None
    # Every number read, or none trusted (fromstring stops at a field it cannot read).
    if values is None or len(values) != data.count(b",") + 1 or len(values) % 2:
        return _merged(_flat_lists(text))
    try:
        # Exact: float64 holds every integer count below 2**53.
        summed = np.bincount(values[0::2], weights=values[1::2])
    except ValueError:
        # A negative bucket index (none is ever stored): the Python merge keeps it as the text says, and
        # reading the histogram refuses it (probes.histogram._check_index).
        return _merged(_flat_lists(text))
    indexes = np.flatnonzero(summed)
    return dict(zip(indexes.tolist(), summed[indexes].astype(np.int64).tolist(), strict=True))


def _series_sql(
    table: str, time_column: str, at: str, hist: str, where: str, raw: tuple[str, str] | None = None
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
    rows' own jsonb text gathered into one JSON array per bucket and region
    (json.loads parses it in C): expanding every entry in SQL, sorting them
    and running two window sums over them for the nearest rank took about
    twice as long (a 30-day series at 10 M rows, in process with nothing
    cached: every target 391 against 192 ms, one target 232 against 131 ms;
    the same values)."""
    # Times come back as integers (a bucket's start in whole seconds, at in microseconds) and are made
    # datetimes in Python (_run_series): Django's timestamptz loader is Python, about 5 microseconds a value,
    # and a 7-day series of every target returns some 5,000 of them.
    bucket = f"extract(epoch FROM date_bin(%(size)s, r.{time_column}, %(origin)s))::int8"
    raw_bucket = "extract(epoch FROM date_bin(%(size)s, m.started_at, %(origin)s))::int8"
    raw_totals = ""
    raw_keys = None
    if raw is not None:
        column, raw_where = raw
        raw_totals = f"""
            UNION ALL
            SELECT {raw_bucket}, m.region_id, count(*), sum(extract(epoch FROM m.started_at))
            FROM {Measurement._meta.db_table} m WHERE {raw_where} GROUP BY 1, 2"""
        raw_keys = f"""
            SELECT {raw_bucket}, m.region_id, width_bucket(m.{column}, %(edges)s::float8[]), count(*)
            FROM {Measurement._meta.db_table} m WHERE {raw_where} AND m.{column} IS NOT NULL GROUP BY 1, 2, 3"""
    totals = f"""
        SELECT b, region_id, sum(samples)::bigint,
               (extract(epoch FROM to_timestamp(sum(seconds) / sum(samples))) * 1000000)::int8
        FROM (
            SELECT {bucket} AS b, r.region_id, sum(r.samples) AS samples, {at} AS seconds
            FROM {table} r WHERE {where} GROUP BY 1, 2{raw_totals}
        ) u
        GROUP BY 1, 2
    """
    # One JSON array of a bucket's histograms per bucket and region: one json.loads each, not one per row.
    hists = (
        f"SELECT {bucket}, r.region_id, {histograms_sql('r.' + hist)} FROM {table} r "
        f"WHERE {where} AND r.{hist} <> '{{}}' GROUP BY 1, 2"
    )
    return totals, hists, raw_keys


def _raw_part(
    metric: str,
    raw: list[tuple[datetime, datetime]],
    targets: list[int],
    regions: list[int],
    params: dict[str, Any],
) -> tuple[str, str] | None:
    """_series_sql's raw argument for raw rows of the intervals, targets and regions (params filled in)."""
    if not raw:
        return None
    params["edges"] = SQL_EDGES
    params["raw_targets"], params["raw_regions"] = targets, regions
    where = "m.target_id = ANY(%(raw_targets)s) AND m.region_id = ANY(%(raw_regions)s) AND " + started_in_params(
        raw, params, "raw", "m"
    )
    return BY_NAME[metric].column, where


def _fetch_all(sql: str, params: dict[str, Any]) -> list[tuple]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows: list[tuple] = cur.fetchall()
        return rows


def _run_series(sqls: tuple[str, str, str | None], q: float, params: dict[str, Any]) -> list[tuple]:
    # Three statements over the same buckets, read side by side where the process allows (side_by_side).
    fetched = side_by_side.run([partial(_fetch_all, sql, params) for sql in sqls if sql is not None])
    totals = {(b, rid): (samples, at) for b, rid, samples, at in fetched[0]}
    stored = {(b, rid): text for b, rid, text in fetched[1]}
    raw: dict[tuple, dict[int, int]] = defaultdict(dict)
    for b, rid, k, n in fetched[2] if len(fetched) > 2 else ():
        raw[(b, rid)][k] = n
    qs = (0.5, 0.95, q)
    picks: dict[tuple, list[float | None]] = {}
    for key in totals:
        text = stored.get(key)
        # A bucket of one stored histogram (a region block, mostly; histograms_sql joins two with "},{") is
        # picked from it as stored.
        if text is not None and "},{" not in text and key not in raw:
            picked = stored_percentiles(_flat_lists(text)[0], *qs)
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
    raw: Sequence[tuple[datetime, datetime]] = (),
) -> list[tuple]:
    """(bucket, region_id, samples, p50, p95, q-quantile, at) from hourly
    rollups (see _series_sql), and the raw rows of `raw` counted into the
    same buckets. at: the mean of the hours' midpoints weighted by their
    samples (a rollup keeps no finer time), and of the raw rows' started_at;
    series() clips it to the bucket's part inside the window."""
    params = {"size": size, "origin": EPOCH, "targets": targets, "regions": regions, "half": HOUR / 2}
    runs = hour_runs(hours)
    ranges = ranges_sql("r.hour", runs, params, "h") if runs else "FALSE"
    where = f"r.target_id = ANY(%(targets)s) AND r.region_id = ANY(%(regions)s) AND {ranges}"
    at = "sum(r.samples * extract(epoch FROM r.hour + %(half)s))"
    raw_part = _raw_part(metric, list(raw), targets, regions, params)
    sqls = _series_sql(HourlyRollup._meta.db_table, "hour", at, _hist_field(metric), where, raw_part)
    return _run_series(sqls, q, params)


def region_series(
    metric: str,
    q: float,
    size: timedelta,
    blocks: list[tuple[int, datetime]],
    regions: list[int],
    raw: Sequence[tuple[datetime, datetime]] = (),
    targets: Sequence[int] = (),
) -> list[tuple]:
    """rollup_series for every target: the same rows, merged from region
    rollup blocks (each inside one time bucket) instead of every probe's
    hourly rows; at comes from the blocks' sample_seconds, the same
    samples-weighted mean of hour midpoints. raw: as rollup_series', over
    `targets` (every target's id)."""
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
    raw_part = _raw_part(metric, list(raw), list(targets), regions, params)
    sqls = _series_sql(RegionRollup._meta.db_table, "start", at, _hist_field(metric), where, raw_part)
    return _run_series(sqls, q, params)
