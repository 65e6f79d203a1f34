"""What /metrics reads (probes.prometheus): the last result of each target x region, trailing-window quantiles,
the running tallies and the regions with their health. Each is one SQL statement (bench/metrics.py times a
scrape of 6 targets x 15 regions and each statement's share).

The pairs are those the tally knows (probes.tally: every target x region that ever stored a measurement): the
newest row of each is one walk down the (target, region, started_at) index. Quantiles follow the package's one
rule, nearest rank (PostgreSQL's percentile_disc, proven to agree with rank.rank_sql for its quantiles), exact
from raw rows: the windows are minutes, far below RAW_MAX.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from probes.metrics import PHASES, PROMETHEUS, PROMETHEUS_HISTOGRAM, latency_row_sql
from probes.readings.fleet import WORKER_LIVE, region_health, worker_rows
from probes.readings.slots import RECENT_FIRST, started_in_params, started_params
from probes.readings.summaries import phase_pieces

# The trailing windows of the quantile gauges, and their quantiles (of probes.metrics.PERCENTILES).
TRAILING_WINDOWS: dict[str, timedelta] = {"5m": timedelta(minutes=5), "1h": timedelta(hours=1)}
TRAILING_QUANTILES: tuple[float, ...] = (0.5, 0.95, 0.99)
# The most TTFT values one target x region can have in the longest window for which window_quantiles' ranks are
# proven exact: 277 a second for an hour, far above any schedule (ten probes every ten seconds make 3,600).
TRAILING_SAMPLES_MAX = 1_000_000

# The columns a last result is read with: the phase milestones and the exposed metrics, each once, in list order.
_LATEST_METRICS = tuple(dict.fromkeys((*PHASES, *PROMETHEUS)))


@dataclass(frozen=True)
class LatestResult:
    """The newest measurement of one target x region."""

    target: str  # the target's name
    region: str  # the region's slug
    outcome: str
    started_at: datetime
    http_status: int | None
    values: dict[str, float | None]  # metric name -> value in the metric's unit (probes.metrics)
    phases: dict[str, float]  # phase_pieces of its milestones (ms), missing ones left out


@dataclass(frozen=True)
class WindowQuantile:
    target: str
    region: str
    window: str  # a key of TRAILING_WINDOWS
    quantile: float
    value: float  # in the metric's unit (ms)
    samples: int  # values in the window


@dataclass(frozen=True)
class Tally:
    """probes.tally.MeasurementTally of one target x region x outcome, named."""

    target: str
    region: str
    outcome: str
    measurements: int
    ttft_count: int
    ttft_sum_ms: float
    ttft_buckets: list[int]  # cumulative, per bound of probes.tally.BUCKETS_S


@dataclass(frozen=True)
class RegionRow:
    slug: str
    name: str
    latitude: float
    longitude: float
    status: str  # live | stale | dark (fleet.py's one rule)
    last_seen: datetime | None
    workers_live: int


def _fetch(sql: str, params: dict | list) -> list[tuple]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows: list[tuple] = cur.fetchall()
        return rows


def latest_results(now: datetime | None = None) -> list[LatestResult]:
    """The newest measurement (by started_at) of every target x region that has one, by target then region.

    Each pair's newest row is looked for in the last RECENT_FIRST (the few slot-time partitions of those days),
    and only for the pairs with none there, in a second statement, in the older ones: every statement over all
    days' partitions costs their planning, more with every day kept, which a scrape every few seconds should not
    pay."""
    from probes.models import Measurement, MeasurementTally, Region, Target

    columns = ", ".join(f"m.{m.column}" for m in _LATEST_METRICS)
    split = (now or timezone.now()) - RECENT_FIRST

    def newest(pairs: str, params: dict, bounds: dict, join: str) -> list[tuple]:
        bound = started_params(params, "w", "m", **bounds)
        return _fetch(
            f"""
            SELECT tg.name, rg.slug, p.target_id, p.region_id, last.*
            FROM {pairs}
            JOIN {Target._meta.db_table} tg ON tg.id = p.target_id
            JOIN {Region._meta.db_table} rg ON rg.id = p.region_id
            {join} LATERAL (
                SELECT m.outcome, m.started_at, m.http_status, {columns} FROM {Measurement._meta.db_table} m
                WHERE m.target_id = p.target_id AND m.region_id = p.region_id AND {bound}
                ORDER BY m.started_at DESC LIMIT 1
            ) last ON TRUE
            ORDER BY tg.name, rg.slug
            """,
            params,
        )

    tally = f"(SELECT DISTINCT target_id, region_id FROM {MeasurementTally._meta.db_table}) p"
    rows = newest(tally, {}, {"since": split}, "LEFT JOIN")
    # started_at (never NULL in a row) is NULL where the pair had no row in the last RECENT_FIRST.
    silent = [(row[2], row[3]) for row in rows if row[5] is None]
    older: dict[tuple[int, int], tuple] = {}
    if silent:
        params = {"targets": [t for t, _ in silent], "regions": [r for _, r in silent]}
        pairs = "unnest(%(targets)s::bigint[], %(regions)s::bigint[]) AS p(target_id, region_id)"
        older = {(row[2], row[3]): row for row in newest(pairs, params, {"until": split}, "JOIN")}
    found = [row if row[5] is not None else older.get((row[2], row[3])) for row in rows]
    results = []
    for target, region, _target_id, _region_id, outcome, started_at, status, *values in (
        row for row in found if row is not None
    ):
        by_name = {m.name: v for m, v in zip(_LATEST_METRICS, values, strict=True)}
        pieces = phase_pieces(by_name)
        results.append(
            LatestResult(
                target=target,
                region=region,
                outcome=outcome,
                started_at=started_at,
                http_status=status,
                values={m.name: by_name[m.name] for m in PROMETHEUS},
                phases={name: piece for name, piece in pieces.items() if piece is not None},
            )
        )
    return results


def window_quantiles(now: datetime) -> list[WindowQuantile]:
    """TRAILING_QUANTILES of probes.metrics.PROMETHEUS_HISTOGRAM (TTFT) per target x region over each window of
    TRAILING_WINDOWS ending at `now`, exact nearest rank; pairs and windows without a value are left out."""
    from probes.models import Measurement, Region, Target

    column = PROMETHEUS_HISTOGRAM.column
    params: dict = {
        # percentile_disc ranks in float8: exact for these quantiles up to TRAILING_SAMPLES_MAX values
        # (rank.float_rank_agrees; tests/metrics holds them to it). It sorts each pair's values on its own,
        # where array_agg and a sort per pair cost more on every scrape (docs/benchmarks.md, "Dashboard reads").
        "quantiles": list(TRAILING_QUANTILES),
    }
    picks = []
    for w, span in enumerate(TRAILING_WINDOWS.values()):
        params[f"since_{w}"] = now - span
        window = f"FILTER (WHERE started_at >= %(since_{w})s)"
        picks.append(f"count(*) {window}")
        picks.append(f"percentile_disc(%(quantiles)s::float8[]) WITHIN GROUP (ORDER BY {column}) {window}")
    bounds = started_in_params([(now - max(TRAILING_WINDOWS.values()), now)], params, "w")
    rows = _fetch(
        f"""
        SELECT tg.name, rg.slug, g.*
        FROM (
            SELECT target_id, region_id, {", ".join(picks)}
            FROM {Measurement._meta.db_table}
            WHERE {bounds} AND {column} IS NOT NULL AND {latency_row_sql()}
            GROUP BY 1, 2
        ) g
        JOIN {Target._meta.db_table} tg ON tg.id = g.target_id
        JOIN {Region._meta.db_table} rg ON rg.id = g.region_id
        ORDER BY tg.name, rg.slug
        """,
        params,
    )
    out: list[WindowQuantile] = []
    for target, region, _target_id, _region_id, *picked in rows:
        for w, label in enumerate(TRAILING_WINDOWS):
            samples, values = picked[2 * w], picked[2 * w + 1]
            if not samples:  # no value in this window: its percentile_disc is NULL
                continue
            out.extend(
                WindowQuantile(target, region, label, q, value, samples)
                for q, value in zip(TRAILING_QUANTILES, values, strict=True)
            )
    return out


def tallies() -> list[Tally]:
    """Every tally row (probes.tally), named, by target, region and outcome."""
    from probes.models import MeasurementTally, Region, Target

    rows = _fetch(
        f"""
        SELECT tg.name, rg.slug, t.outcome, t.measurements, t.ttft_count, t.ttft_sum_ms, t.ttft_buckets
        FROM {MeasurementTally._meta.db_table} t
        JOIN {Target._meta.db_table} tg ON tg.id = t.target_id
        JOIN {Region._meta.db_table} rg ON rg.id = t.region_id
        ORDER BY tg.name, rg.slug, t.outcome
        """,
        [],
    )
    return [Tally(*row) for row in rows]


def region_rows(now: datetime) -> list[RegionRow]:
    """Every region with its place, its status and last heartbeat (region_health) and its live workers
    (worker_rows), by slug."""
    from probes.models import Region

    health = region_health(now)
    live: dict[int, int] = {}
    for worker in worker_rows(now=now):
        if worker.status == WORKER_LIVE:
            live[worker.region_id] = live.get(worker.region_id, 0) + 1
    return [
        RegionRow(
            slug=r.slug,
            name=r.name,
            latitude=r.latitude,
            longitude=r.longitude,
            status=health[r.id].status,
            last_seen=health[r.id].last_seen,
            workers_live=live.get(r.id, 0),
        )
        for r in Region.objects.order_by("slug")
    ]
