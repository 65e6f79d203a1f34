"""The read queries behind the dashboard: plain functions from Filters to
rows of plain Python values (no HTTP, no ORM objects in the results).

Where numbers come from: a window of at most RAW_MAX (6 h) is read from raw
measurements only. A longer one is read from DailyRollup rows for complete
days inside it whose 24 hours are all marked, HourlyRollup rows for the
other marked hours inside it, and raw rows for the rest (the partial hours
at either end and hours not rolled up yet); see probes.rollups.read_window.
Percentiles are nearest-rank everywhere: from merged histograms (within
about 1% of the exact value) or, for raw time-series buckets, exact.

Merged rollup parts are kept in probes.rollups.merge_cache, keyed by the
built_at stamps of the marks of the hours they cover: a dashboard refresh
over 30 days re-reads only the raw edges of its window, and a rebuilt hour
is never served from an old merge.

tokens_per_s has no histogram in the rollups. On raw-only windows its
percentiles are exact, from the raw values; on longer windows only its mean
(merged sums and counts) exists, so p50/p95 are None and `value` holds the
mean, with value_kind "mean" saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.db import connection

from probes.geo import latency_tax_ms, path_floor_ms
from probes.histogram import Histogram, bucket_value, exact_percentile, histogram_of
from probes.models import HourlyRollup, Measurement, Probe, Region, Target
from probes.rollups import HOUR, coverage, floor_hour, hour_runs, merge_cache, read_window, reporting_reads

MINUTE = timedelta(minutes=1)
WINDOWS = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
WINDOW_CHOICES = (*WINDOWS, "custom")
DEFAULT_WINDOW = "1h"
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}
DEFAULT_PERCENTILE = "p50"
METRIC_CHOICES = ("ttft", "ttfat", "ttfb", "connect", "tls", "total", "tokens_per_s")
DEFAULT_METRIC = "ttft"
UNITS = {**{m: "ms" for m in METRIC_CHOICES}, "tokens_per_s": "tok/s"}
MAX_WINDOW = timedelta(days=400)
# Up to here raw rows are few enough to read directly (one target from 15
# regions is ~7,000 rows in 6 h), and exact beats merged histograms.
RAW_MAX = timedelta(hours=6)
BUCKETS = {
    "15m": timedelta(minutes=1),
    "1h": timedelta(minutes=2),
    "24h": timedelta(minutes=30),
    "7d": timedelta(hours=3),
    "30d": timedelta(hours=12),
}
CUSTOM_BUCKETS = 60
# Time-series buckets are aligned to this origin, so hour-sized ones start
# on whole hours and the same bucket reads the same rows on every refresh.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PHASE_METRICS = ("dns", "connect", "tls", "ttfb", "ttft", "total")
SEGMENTS = ("dns", "connect", "tls", "server_wait", "first_token", "streaming")
TPS = "tokens_per_s"


class BadParameter(ValueError):
    """A query parameter that cannot be used; .param names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


@dataclass
class Filters:
    """What the dashboard shows. Empty target_ids / region_ids mean all."""

    target_ids: list[int] = field(default_factory=list)
    region_ids: list[int] = field(default_factory=list)
    since: datetime | None = None
    until: datetime | None = None
    metric: str = DEFAULT_METRIC
    percentile: float = 0.5
    # The preset the window came from ("custom" otherwise); it picks the
    # time-series bucket size.
    window: str = "custom"

    def __post_init__(self) -> None:
        if self.since is None or self.until is None:
            raise BadParameter("since", "since and until are required")
        self.since = _aware(self.since)
        self.until = _aware(self.until)
        if self.since >= self.until:
            raise BadParameter("since", "since must be before until")
        if self.metric not in METRIC_CHOICES:
            raise BadParameter("metric", f"metric must be one of {', '.join(METRIC_CHOICES)}")
        if self.percentile not in PERCENTILES.values():
            raise BadParameter("percentile", f"percentile must be one of {', '.join(PERCENTILES)}")
        if self.window not in WINDOW_CHOICES:
            raise BadParameter("window", f"window must be one of {', '.join(WINDOW_CHOICES)}")
        self.target_ids = list(self.target_ids)
        self.region_ids = list(self.region_ids)

    @property
    def percentile_label(self) -> str:
        return next(label for label, q in PERCENTILES.items() if q == self.percentile)

    @property
    def unit(self) -> str:
        return UNITS[self.metric]

    @property
    def raw_only(self) -> bool:
        return self.until - self.since <= RAW_MAX


def _aware(when: datetime) -> datetime:
    # A naive time is taken as UTC, like probes.timeparse does for input.
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


# Shared helpers ----------------------------------------------------------------


def _scope(f: Filters) -> tuple[list[int], list[int]]:
    """Explicit id lists even for "all": with both leading columns bound the
    (target, region, started_at) index is walked once per pair and never
    scanned across a target's whole history."""
    targets = f.target_ids or list(Target.objects.values_list("id", flat=True))
    regions = f.region_ids or list(Region.objects.values_list("id", flat=True))
    return targets, regions


def _read(f: Filters, group_by: tuple[str, ...], *extra: str, target_ids=None, region_ids=None):
    """Readings of f's window with histograms of f.metric and `extra`, and
    the raw tokens_per_s values when they are the metric on a raw window."""
    if target_ids is None or region_ids is None:
        targets, regions = _scope(f)
        target_ids = targets if target_ids is None else target_ids
        region_ids = regions if region_ids is None else region_ids
    metrics = [] if f.metric == TPS else [f.metric]
    metrics += [m for m in extra if m not in metrics]
    return read_window(
        f.since,
        f.until,
        group_by=group_by,
        target_ids=target_ids,
        region_ids=region_ids,
        metrics=metrics,
        rollups=not f.raw_only,
        raw_values=(TPS,) if f.metric == TPS and f.raw_only else (),
        cache=True,
    )


def _metric_stats(reading, f: Filters) -> tuple[float | None, float | None, float | None, str]:
    """(p50, p95, value, value_kind) of the chosen metric in a reading."""
    if f.metric == TPS:
        if not f.raw_only:
            return None, None, reading.tokens_per_s_mean, "mean"
        values = reading.values.get(TPS)
        if not values:
            return None, None, None, "percentile"
        return (
            exact_percentile(values, 0.5),
            exact_percentile(values, 0.95),
            exact_percentile(values, f.percentile),
            "percentile",
        )
    hist = reading.hists[f.metric]
    return hist.percentile(0.5), hist.percentile(0.95), hist.percentile(f.percentile), "percentile"


def _regions(ids) -> dict[int, dict]:
    return {
        r["id"]: r
        for r in Region.objects.filter(id__in=list(ids)).values(
            "id", "slug", "name", "city", "country", "latitude", "longitude"
        )
    }


def _targets(ids) -> dict[int, dict]:
    return {
        t["id"]: t
        for t in Target.objects.filter(id__in=list(ids)).values(
            "id", "name", "model", "location_name", "latitude", "longitude"
        )
    }


# The dashboard's queries ---------------------------------------------------------


def region_summary(f: Filters) -> list[dict]:
    """One row per region with data, plus the regions the selected targets'
    enabled probes run from that have none (samples 0), by region name.

    Keys: id, slug, name, city, country, lat, lon, samples, errors,
    error_rate, p50, p95 (of f.metric), value (f.percentile of f.metric, or
    the mean, see value_kind), value_kind ("percentile" | "mean"),
    connect_p50, floor_ms (round-trip fiber floor to the target's hosting
    location; only with exactly one target selected that has coordinates),
    tax_ms (connect_p50 - floor_ms)."""
    targets, regions = _scope(f)
    readings = _read(f, ("region_id",), "connect", target_ids=targets, region_ids=regions)
    readings = {key[0]: r for key, r in readings.items() if r.samples}
    expected = set(
        Probe.objects.filter(enabled=True, target_id__in=targets, regions__id__in=regions).values_list(
            "regions__id", flat=True
        )
    )
    info = _regions(set(readings) | expected)
    target = None
    if len(f.target_ids) == 1:
        target = _targets(f.target_ids).get(f.target_ids[0])
    rows = []
    for region_id, region in info.items():
        reading = readings.get(region_id)
        floor = None
        if target and target["latitude"] is not None and target["longitude"] is not None:
            floor = path_floor_ms(region["latitude"], region["longitude"], target["latitude"], target["longitude"])
        if reading is None:
            p50 = p95 = value = connect = None
            kind = "mean" if f.metric == TPS and not f.raw_only else "percentile"
            samples = errors = 0
            error_rate = None
        else:
            p50, p95, value, kind = _metric_stats(reading, f)
            connect = reading.hists["connect"].percentile(0.5)
            samples, errors, error_rate = reading.samples, reading.errors, reading.error_rate
        rows.append(
            {
                "id": region_id,
                "slug": region["slug"],
                "name": region["name"],
                "city": region["city"],
                "country": region["country"],
                "lat": region["latitude"],
                "lon": region["longitude"],
                "samples": samples,
                "errors": errors,
                "error_rate": error_rate,
                "p50": p50,
                "p95": p95,
                "value": value,
                "value_kind": kind,
                "connect_p50": connect,
                "floor_ms": floor,
                "tax_ms": latency_tax_ms(connect, floor) if floor is not None else None,
            }
        )
    rows.sort(key=lambda row: (row["name"], row["slug"]))
    return rows


def histograms(f: Filters) -> dict[str, Histogram]:
    """Region slug to the merged histogram of f.metric, for regions with at
    least one value, in region-name order. tokens_per_s has histograms only
    on raw-only windows (built from the raw values; the bucket layout does
    not care about the unit); on longer windows the answer is {}."""
    if f.metric == TPS and not f.raw_only:
        return {}
    readings = _read(f, ("region_id",))
    hists = {}
    for (region_id,), reading in readings.items():
        hist = histogram_of(reading.values.get(TPS, ())) if f.metric == TPS else reading.hists[f.metric]
        if hist.count:
            hists[region_id] = hist
    info = _regions(hists)
    order = sorted(hists, key=lambda rid: (info[rid]["name"], info[rid]["slug"]))
    return {info[rid]["slug"]: hists[rid] for rid in order}


def table(f: Filters) -> list[dict]:
    """One row per (region, target) pair with data, by region then target name.

    Keys: region (the region's name, for display), region_slug, target (its
    name), target_id, model, samples, errors, error_rate, p50, p95 (of
    f.metric), value, value_kind (as in region_summary)."""
    readings = _read(f, ("region_id", "target_id"))
    readings = {key: r for key, r in readings.items() if r.samples}
    regions = _regions({rid for rid, _ in readings})
    targets = _targets({tid for _, tid in readings})
    rows = []
    for (region_id, target_id), reading in readings.items():
        p50, p95, value, kind = _metric_stats(reading, f)
        region, target = regions[region_id], targets[target_id]
        rows.append(
            {
                "region": region["name"],
                "region_slug": region["slug"],
                "target": target["name"],
                "target_id": target_id,
                "model": target["model"],
                "samples": reading.samples,
                "errors": reading.errors,
                "error_rate": reading.error_rate,
                "p50": p50,
                "p95": p95,
                "value": value,
                "value_kind": kind,
            }
        )
    rows.sort(key=lambda row: (row["region"], row["target"], row["target_id"]))
    return rows


def region_ranking(region_slug: str, f: Filters) -> list[dict]:
    """Every target measured from one region in the window, best first:
    ranked by p50 of f.metric (TTFT unless the filters choose another), lower
    first, or higher first for tokens_per_s; rows without a value last.
    f.target_ids and f.region_ids are ignored: the region is the page's own.

    Keys: rank, target_id, target, model, location_name, samples, errors,
    error_rate, p50, p95, value, value_kind."""
    region_id = Region.objects.filter(slug=region_slug).values_list("id", flat=True).first()
    if region_id is None:
        raise BadParameter("region", f"unknown region {region_slug!r}")
    targets = list(Target.objects.values_list("id", flat=True))
    readings = _read(f, ("target_id",), target_ids=targets, region_ids=[region_id])
    info = _targets(tid for (tid,), r in readings.items() if r.samples)
    rows = []
    for (target_id,), reading in readings.items():
        if not reading.samples:
            continue
        p50, p95, value, kind = _metric_stats(reading, f)
        target = info[target_id]
        rows.append(
            {
                "target_id": target_id,
                "target": target["name"],
                "model": target["model"],
                "location_name": target["location_name"],
                "samples": reading.samples,
                "errors": reading.errors,
                "error_rate": reading.error_rate,
                "p50": p50,
                "p95": p95,
                "value": value,
                "value_kind": kind,
            }
        )
    sign = -1 if f.metric == TPS else 1

    def rank_key(row):
        score = row["p50"] if row["p50"] is not None else (row["value"] if row["value_kind"] == "mean" else None)
        return (score is None, sign * score if score is not None else 0, row["target"])

    rows.sort(key=rank_key)
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def _segments(medians: dict[str, float | None]) -> dict[str, float]:
    """Stack pieces from the phase medians. A missing median adds nothing
    (a warm connection has no DNS, connect or TLS phase; a plain-HTTP target
    no first token). These are differences of medians, not medians of
    differences: they can come out negative (the median TTFB of a window
    need not exceed its median DNS + connect + TLS), so each piece is
    measured from the furthest point the stack has reached and clamped at
    0. The stack then ends at the total median whenever that is the largest
    milestone, as it is when every phase is present."""
    reached = 0.0
    pieces = {}
    dns, connect, tls = (medians[m] or 0.0 for m in ("dns", "connect", "tls"))
    milestones = [
        ("dns", dns),
        ("connect", dns + connect),
        ("tls", dns + connect + tls),
        ("server_wait", medians["ttfb"]),
        ("first_token", medians["ttft"]),
        ("streaming", medians["total"]),
    ]
    for name, point in milestones:
        if point is None:
            pieces[name] = 0.0
            continue
        pieces[name] = max(0.0, point - reached)
        reached = max(reached, point)
    return pieces


def phases(f: Filters) -> list[dict]:
    """Where the time of a call goes, per region with data, by region name.

    Keys: region (slug), region_name, samples, medians {dns, connect, tls,
    ttfb, ttft, total: ms or None}, segments {dns, connect, tls, server_wait,
    first_token, streaming: ms, never negative}. server_wait = ttfb - (dns +
    connect + tls), first_token = ttft - ttfb, streaming = total - ttft; see
    _segments for missing medians and clamping."""
    readings = _read(f, ("region_id",), *PHASE_METRICS)
    readings = {key[0]: r for key, r in readings.items() if r.samples}
    info = _regions(readings)
    rows = []
    for region_id, reading in readings.items():
        medians = {m: reading.hists[m].percentile(0.5) for m in PHASE_METRICS}
        rows.append(
            {
                "region": info[region_id]["slug"],
                "region_name": info[region_id]["name"],
                "samples": reading.samples,
                "medians": medians,
                "segments": _segments(medians),
            }
        )
    rows.sort(key=lambda row: (row["region_name"], row["region"]))
    return rows


# Time series ---------------------------------------------------------------------


def bucket_size(f: Filters) -> timedelta:
    """The time-series step: fixed for the presets; about CUSTOM_BUCKETS
    buckets for a custom window, in whole minutes below an hour and whole
    hours above (hour-sized buckets can be read from hourly rollups)."""
    if f.window in BUCKETS:
        return BUCKETS[f.window]
    step = (f.until - f.since) / CUSTOM_BUCKETS
    if step < HOUR:
        return max(1, round(step / MINUTE)) * MINUTE
    return max(1, round(step / HOUR)) * HOUR


def _bucket_start(when: datetime, size: timedelta) -> datetime:
    return EPOCH + ((when - EPOCH) // size) * size


def _merge_intervals(intervals: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[tuple[datetime, datetime]] = []
    for a, b in intervals:
        if merged and merged[-1][1] == a:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def _ranges_sql(column: str, intervals, params: dict, prefix: str) -> str:
    parts = []
    for i, (a, b) in enumerate(intervals):
        params[f"{prefix}{i}a"], params[f"{prefix}{i}b"] = a, b
        parts.append(f"({column} >= %({prefix}{i}a)s AND {column} < %({prefix}{i}b)s)")
    return "(" + " OR ".join(parts) + ")"


def _raw_series(f: Filters, size: timedelta, intervals, targets, regions, percentiles: bool) -> list[tuple]:
    """(bucket, region_id, samples, p50, p95, tokens_per_s mean) from raw
    rows, grouped in SQL. Nearest rank is taken from the sorted values with
    the rank computed in numeric, the same rule as Histogram.percentile;
    percentile_disc would compute it in floating point and can land one
    rank off."""
    column = TPS if f.metric == TPS else f"{f.metric}_ms"
    params = {
        "size": size,
        "origin": EPOCH,
        "targets": targets,
        "regions": regions,
        "q50": Decimal("0.5"),
        "q95": Decimal("0.95"),
    }
    ranges = _ranges_sql("started_at", intervals, params, "r")
    if percentiles:
        picks = "vals[greatest(1, ceil(%(q50)s * n))::int], vals[greatest(1, ceil(%(q95)s * n))::int]"
        values = f"count({column}) AS n, array_agg({column} ORDER BY {column}) FILTER (WHERE {column} IS NOT NULL) AS vals,"
    else:
        picks = "NULL::float8, NULL::float8"
        values = ""
    sql = f"""
        SELECT b, region_id, samples, {picks}, tps
        FROM (
            SELECT date_bin(%(size)s, started_at, %(origin)s) AS b, region_id, count(*) AS samples,
                   {values} avg(tokens_per_s) AS tps
            FROM {Measurement._meta.db_table}
            WHERE target_id = ANY(%(targets)s) AND region_id = ANY(%(regions)s) AND {ranges}
            GROUP BY 1, 2
        ) s
    """
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def _rollup_series(f: Filters, size: timedelta, hours, targets, regions) -> list[tuple]:
    """(bucket, region_id, samples, p50, p95, tokens_per_s mean) from hourly
    rollups. The histograms are merged per bucket and the nearest-rank
    bucket picked in SQL, so only one row per bucket and region comes back
    instead of every occupied histogram bucket."""
    table = HourlyRollup._meta.db_table
    params = {"size": size, "origin": EPOCH, "targets": targets, "regions": regions}
    ranges = _ranges_sql("hour", hour_runs(hours), params, "h")
    where = f"target_id = ANY(%(targets)s) AND region_id = ANY(%(regions)s) AND {ranges}"
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT date_bin(%(size)s, hour, %(origin)s) AS b, region_id, sum(samples)::bigint,
                   sum(tokens_per_s_sum), sum(tokens_per_s_count)::bigint
            FROM {table} WHERE {where} GROUP BY 1, 2
            """,
            params,
        )
        totals = {(b, rid): (samples, tps_sum, tps_count) for b, rid, samples, tps_sum, tps_count in cur.fetchall()}
        picks: dict[tuple, tuple] = {}
        if f.metric != TPS:
            params.update(q50=Decimal("0.5"), q95=Decimal("0.95"))
            cur.execute(
                f"""
                WITH pairs AS (
                    SELECT date_bin(%(size)s, h.hour, %(origin)s) AS b, h.region_id, e.key::int AS k,
                           sum(e.value::bigint) AS n
                    FROM {table} h CROSS JOIN LATERAL jsonb_each_text(h.{f.metric}_hist) e
                    WHERE {where}
                    GROUP BY 1, 2, 3
                ), cum AS (
                    SELECT b, region_id, k,
                           sum(n) OVER (PARTITION BY b, region_id ORDER BY k) AS c,
                           sum(n) OVER (PARTITION BY b, region_id) AS t
                    FROM pairs
                )
                SELECT b, region_id,
                       min(k) FILTER (WHERE c >= greatest(1, ceil(%(q50)s * t))),
                       min(k) FILTER (WHERE c >= greatest(1, ceil(%(q95)s * t)))
                FROM cum GROUP BY 1, 2
                """,
                params,
            )
            picks = {(b, rid): (k50, k95) for b, rid, k50, k95 in cur.fetchall()}
    rows = []
    for key, (samples, tps_sum, tps_count) in totals.items():
        k50, k95 = picks.get(key, (None, None))
        rows.append(
            (
                key[0],
                key[1],
                samples,
                bucket_value(k50) if k50 is not None else None,
                bucket_value(k95) if k95 is not None else None,
                tps_sum / tps_count if tps_count else None,
            )
        )
    return rows


def _bucket_plan(f: Filters, size: timedelta, plan) -> tuple[dict[datetime, list[datetime]], list[tuple]]:
    """Which buckets come from hourly rollups (bucket start -> its hours)
    and which intervals from raw rows. A bucket is rolled up only when its
    part inside the window is made of whole marked hours."""
    rolled: dict[datetime, list[datetime]] = {}
    raw: list[tuple[datetime, datetime]] = []
    start = _bucket_start(f.since, size)
    while start < f.until:
        a, b = max(start, f.since), min(start + size, f.until)
        hours = []
        if floor_hour(a) == a and floor_hour(b) == b:
            hours = [a + HOUR * i for i in range((b - a) // HOUR)]
        if hours and all(h in plan.built for h in hours):
            rolled[start] = hours
        else:
            raw.append((a, b))
        start += size
    return rolled, _merge_intervals(raw)


def timeseries(f: Filters) -> list[dict]:
    """p50 and p95 of f.metric per time bucket and region (bucket_size(f)),
    buckets with data only, by region slug then time.

    Keys: bucket_start (aware UTC datetime, aligned to the bucket size, so
    the first may start before f.since), region (slug), region_name, p50,
    p95, samples, mean (tokens_per_s only, else None).

    Raw-only windows, and buckets shorter than an hour, are grouped from raw
    rows in SQL (exact nearest rank). Otherwise a bucket whose part inside
    the window is made of whole marked hours is merged from hourly rollups,
    and any other bucket (the partial first and last ones, or one holding an
    hour not rolled up yet) is read from raw rows as a whole, so no bucket
    ever mixes a histogram with raw values. Rolled-up buckets are kept in
    probes.rollups.merge_cache under the fingerprint of their hours' marks.
    tokens_per_s on such windows has means only (p50/p95 None)."""
    size = bucket_size(f)
    targets, regions = _scope(f)
    found = []
    with reporting_reads():
        rolled: dict[datetime, list[datetime]] = {}
        raw_intervals = [(f.since, f.until)]
        if not f.raw_only and size % HOUR == timedelta(0):
            plan = coverage(f.since, f.until, daily=False)
            rolled, raw_intervals = _bucket_plan(f, size, plan)
        if raw_intervals:
            found += _raw_series(f, size, raw_intervals, targets, regions, f.metric != TPS or f.raw_only)
        if rolled:
            scope = (f.metric, tuple(targets), tuple(regions), size)
            keys = {start: ("series", scope, start, plan.fingerprint(hours)) for start, hours in rolled.items()}
            missing = []
            for start, key in keys.items():
                cached = merge_cache.get(key)
                if cached is None:
                    missing.append(start)
                else:
                    found += cached
            if missing:
                computed = _rollup_series(f, size, [h for start in missing for h in rolled[start]], targets, regions)
                by_bucket: dict[datetime, list[tuple]] = {start: [] for start in missing}
                for row in computed:
                    by_bucket[row[0]].append(row)
                for start, rows in by_bucket.items():
                    merge_cache.put(keys[start], rows, weight=1 + len(rows))
                found += computed
    info = _regions({row[1] for row in found})
    rows = [
        {
            "bucket_start": b.astimezone(UTC),
            "region": info[rid]["slug"],
            "region_name": info[rid]["name"],
            "p50": p50,
            "p95": p95,
            "samples": int(samples),
            "mean": float(tps) if f.metric == TPS and tps is not None else None,
        }
        for b, rid, samples, p50, p95, tps in found
    ]
    rows.sort(key=lambda row: (row["region"], row["bucket_start"]))
    return rows


# Recent rows -----------------------------------------------------------------------

RECENT_FIELDS = (
    "id",
    "started_at",
    "probe_id",
    "outcome",
    "error_type",
    "error",
    "http_status",
    "connection",
    "dns_ms",
    "connect_ms",
    "tls_ms",
    "ttfb_ms",
    "ttft_ms",
    "ttfat_ms",
    "total_ms",
    "output_tokens",
    "tokens_per_s",
)


def _check_recent(target_id: int, limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
        raise BadParameter("limit", "limit must be an integer from 1 to 1000")
    if not Target.objects.filter(id=target_id).exists():
        raise BadParameter("target", f"unknown target id {target_id}")


def _recent_rows(records) -> list[dict]:
    rows = [dict(zip(("region_id", *RECENT_FIELDS), rec)) for rec in records]
    regions = _regions({row["region_id"] for row in rows})
    for row in rows:
        region = regions[row.pop("region_id")]
        row["region"] = region["slug"]
        row["region_name"] = region["name"]
    return rows


def recent_measurements(target_id: int, limit: int = 100) -> list[dict]:
    """The target's latest measurements, newest first.

    Keys: id, started_at, region (slug), region_name, probe_id, outcome,
    error_type, error, http_status, connection, dns_ms, connect_ms, tls_ms,
    ttfb_ms, ttft_ms, ttfat_ms, total_ms, output_tokens, tokens_per_s."""
    _check_recent(target_id, limit)
    table = Measurement._meta.db_table
    columns = ", ".join(f"m.{c}" for c in RECENT_FIELDS)
    # Newest `limit` per region first, each a short backward walk of the
    # (target, region, started_at) index; "newest of the target" alone has
    # no index in that order and would sort the target's whole history.
    sql = f"""
        SELECT r.id, {columns}
        FROM {Region._meta.db_table} r
        CROSS JOIN LATERAL (
            SELECT {", ".join(RECENT_FIELDS)} FROM {table}
            WHERE target_id = %s AND region_id = r.id
            ORDER BY started_at DESC LIMIT %s
        ) m
        ORDER BY m.started_at DESC, m.id DESC
        LIMIT %s
    """
    with connection.cursor() as cur:
        cur.execute(sql, [target_id, limit, limit])
        return _recent_rows(cur.fetchall())


def recent_failures(target_id: int, limit: int = 100) -> list[dict]:
    """The target's latest measurements whose outcome is not ok, newest
    first; same keys as recent_measurements."""
    _check_recent(target_id, limit)
    # exclude() writes NOT (outcome = 'ok'), the partial index's own
    # predicate, so the planner can walk meas_target_failures backwards.
    records = (
        Measurement.objects.filter(target_id=target_id)
        .exclude(outcome="ok")
        .order_by("-started_at")
        .values_list("region_id", *RECENT_FIELDS)[:limit]
    )
    return _recent_rows(records)
