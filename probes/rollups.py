"""Hourly rollups with mergeable histograms, their rebuild, the readers that
mix rollups with raw rows, and retention.

An hour is "rolled up" when a RollupHour mark says so; the mark is written in
the same transaction as the hour's rollups, and removed by ingest when a late
measurement lands in that hour. Readers use rollups for marked hours and raw
rows for everything else, so a reading is always complete. Percentiles are
read from merged histograms, never averaged.
"""

from __future__ import annotations

import logging
import zlib
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from probes.histogram import Histogram

log = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
METRICS = ("ttft", "ttfat", "ttfb", "connect", "tls", "total")
METRIC_COLUMNS = {m: f"{m}_ms" for m in METRICS}


def floor_hour(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def hours_between(since: datetime, until: datetime) -> list[datetime]:
    hours = []
    hour = floor_hour(since)
    while hour < until:
        hours.append(hour)
        hour += HOUR
    return hours


def lock_hours(hours: Iterable[datetime], *, shared: bool = False) -> None:
    """Serialise a rebuild of an hour with ingest into it: without this, a row
    committed during a rebuild could be missed while the hour is marked
    complete. Ingest takes the lock shared (batches never wait for each
    other), a rebuild exclusive. Sorted, so two lockers never deadlock."""
    keys = sorted({zlib.crc32(floor_hour(h).isoformat().encode()) for h in hours})
    fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    with connection.cursor() as cur:
        for key in keys:
            cur.execute(f"SELECT {fn}(%s, %s)", [7141, key - 2**31])


def rebuild_hour(hour: datetime) -> int:
    """(Re)build every (probe, region) rollup of one UTC hour from raw rows.
    Returns the number of rollup rows written. Running it twice gives the same
    rollups. An hour with no raw rows left (pruned) keeps its rollups."""
    from probes.models import HourlyRollup, Measurement, RollupHour

    hour = floor_hour(hour)
    now = datetime.now(UTC)
    cols = ["probe_id", "region_id", "target_id", "outcome", "tokens_per_s", *METRIC_COLUMNS.values()]
    with transaction.atomic():
        lock_hours([hour])
        groups: dict[tuple[int, int], dict] = {}
        rows = (
            Measurement.objects.filter(started_at__gte=hour, started_at__lt=hour + HOUR)
            .values_list(*cols)
            .iterator(chunk_size=5000)
        )
        for probe_id, region_id, target_id, outcome, tps, *values in rows:
            g = groups.get((probe_id, region_id))
            if g is None:
                g = groups[(probe_id, region_id)] = {
                    "target_id": target_id,
                    "samples": 0,
                    "errors": 0,
                    "outcomes": defaultdict(int),
                    "tps_sum": 0.0,
                    "tps_count": 0,
                    "hists": {m: Histogram() for m in METRICS},
                }
            g["samples"] += 1
            g["outcomes"][outcome] += 1
            if outcome != "ok":
                g["errors"] += 1
            if tps is not None:
                g["tps_sum"] += tps
                g["tps_count"] += 1
            for metric, value in zip(METRICS, values):
                if value is not None:
                    g["hists"][metric].add(value)
        if not groups:
            has_rollups = HourlyRollup.objects.filter(hour=hour).exists()
            if not has_rollups and hour + HOUR <= now:
                RollupHour.objects.update_or_create(hour=hour, defaults={"built_at": now})
            return 0
        HourlyRollup.objects.filter(hour=hour).delete()
        HourlyRollup.objects.bulk_create(
            [
                HourlyRollup(
                    probe_id=probe_id,
                    region_id=region_id,
                    target_id=g["target_id"],
                    hour=hour,
                    samples=g["samples"],
                    errors=g["errors"],
                    outcomes=dict(g["outcomes"]),
                    tokens_per_s_sum=g["tps_sum"],
                    tokens_per_s_count=g["tps_count"],
                    **{f"{m}_hist": g["hists"][m].to_sparse() for m in METRICS},
                )
                for (probe_id, region_id), g in groups.items()
            ]
        )
        # Only an hour that has ended can be complete.
        if hour + HOUR <= now:
            RollupHour.objects.update_or_create(hour=hour, defaults={"built_at": now})
        else:
            RollupHour.objects.filter(hour=hour).delete()
    return len(groups)


def rebuild_range(since: datetime, until: datetime) -> tuple[int, int]:
    """Rebuild every hour overlapping [since, until). Returns (hours, rows)."""
    hours = hours_between(since, until)
    written = sum(rebuild_hour(h) for h in hours)
    return len(hours), written


def rollup_stale_hours(lookback_hours: int = 48) -> int:
    """The schedule's job: build the ended hours of the last two days that
    have no mark (never built, or made stale by a late row)."""
    from probes.models import RollupHour

    now = datetime.now(UTC)
    current = floor_hour(now)
    hours = [current - HOUR * i for i in range(1, lookback_hours + 1)]
    marked = set(RollupHour.objects.filter(hour__in=hours).values_list("hour", flat=True))
    built = 0
    for hour in sorted(set(hours) - marked):
        built += rebuild_hour(hour)
    # The current hour too, so rollup readers of long windows stay fresh; it
    # gets no mark, so readers still use its raw rows.
    rebuild_hour(current)
    return built


def prune_raw(now: datetime | None = None) -> int:
    """Delete raw measurements older than the retention, in batches, after
    making sure every hour being deleted is rolled up."""
    from probes.models import HourlyRollup, Measurement, RollupHour

    now = now or datetime.now(UTC)
    cutoff = floor_hour(now - timedelta(days=settings.LATENCY_RETENTION_DAYS))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT DISTINCT date_trunc('hour', started_at) FROM {Measurement._meta.db_table} WHERE started_at < %s",
            [cutoff],
        )
        raw_hours = {row[0] for row in cur.fetchall()}
    marked = set(RollupHour.objects.filter(hour__in=raw_hours).values_list("hour", flat=True))
    for hour in sorted(raw_hours - marked):
        rebuild_hour(hour)
    deleted = 0
    table = Measurement._meta.db_table
    while True:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(
                f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE started_at < %s LIMIT %s)",
                [cutoff, settings.LATENCY_PRUNE_BATCH],
            )
            n = cur.rowcount
        deleted += n
        if n < settings.LATENCY_PRUNE_BATCH:
            break
    if settings.LATENCY_ROLLUP_RETENTION_DAYS:
        old = floor_hour(now - timedelta(days=settings.LATENCY_ROLLUP_RETENTION_DAYS))
        HourlyRollup.objects.filter(hour__lt=old).delete()
        RollupHour.objects.filter(hour__lt=old).delete()
    return deleted


def raw_intervals(since: datetime, until: datetime, marked: set[datetime]) -> list[tuple[datetime, datetime]]:
    """The parts of [since, until) not covered by marked hours, merged into
    as few intervals as possible (one range condition each)."""
    intervals: list[tuple[datetime, datetime]] = []
    start = since
    for hour in sorted(marked):
        if hour > start:
            intervals.append((start, hour))
        start = max(start, hour + HOUR)
    if start < until:
        intervals.append((start, until))
    return intervals


def raw_intervals_q(since: datetime, until: datetime, marked: set[datetime]) -> Q:
    q = Q(pk__in=[])
    for a, b in raw_intervals(since, until, marked):
        q |= Q(started_at__gte=a, started_at__lt=b)
    return q


class Reading:
    """Merged statistics of one group over a window."""

    __slots__ = ("samples", "errors", "hists", "tps_sum", "tps_count")

    def __init__(self) -> None:
        self.samples = 0
        self.errors = 0
        self.hists = {m: Histogram() for m in METRICS}
        self.tps_sum = 0.0
        self.tps_count = 0

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None

    @property
    def tokens_per_s_mean(self) -> float | None:
        return self.tps_sum / self.tps_count if self.tps_count else None


def read_window(
    since: datetime,
    until: datetime,
    *,
    group_by: tuple[str, ...] = ("region_id",),
    target_ids: list[int] | None = None,
    probe_ids: list[int] | None = None,
    region_ids: list[int] | None = None,
) -> dict[tuple, Reading]:
    """Merged histograms per group over [since, until): rollups for the hours
    marked complete and entirely inside the window, raw rows for the rest."""
    from probes.models import HourlyRollup, Measurement, RollupHour

    allowed = {"region_id", "target_id", "probe_id"}
    if not set(group_by) <= allowed:
        raise ValueError(f"group_by must use {sorted(allowed)}")
    full_hours = [h for h in hours_between(since, until) if h >= since and h + HOUR <= until]
    marked = set(RollupHour.objects.filter(hour__in=full_hours).values_list("hour", flat=True)) if full_hours else set()

    def narrow(qs):
        if target_ids:
            qs = qs.filter(target_id__in=target_ids)
        if probe_ids:
            qs = qs.filter(probe_id__in=probe_ids)
        if region_ids:
            qs = qs.filter(region_id__in=region_ids)
        return qs

    out: dict[tuple, Reading] = defaultdict(Reading)
    if marked:
        fields = [*group_by, "samples", "errors", "tokens_per_s_sum", "tokens_per_s_count", *[f"{m}_hist" for m in METRICS]]
        for rec in narrow(HourlyRollup.objects.filter(hour__in=marked)).values_list(*fields).iterator(chunk_size=2000):
            key = tuple(rec[: len(group_by)])
            samples, errors, tps_sum, tps_count, *hists = rec[len(group_by) :]
            r = out[key]
            r.samples += samples
            r.errors += errors
            r.tps_sum += tps_sum
            r.tps_count += tps_count
            for metric, sparse in zip(METRICS, hists):
                if sparse:
                    r.hists[metric].merge(Histogram.from_sparse(sparse))

    raw = narrow(Measurement.objects.filter(raw_intervals_q(since, until, marked)))
    cols = [*group_by, "outcome", "tokens_per_s", *METRIC_COLUMNS.values()]
    for rec in raw.values_list(*cols).iterator(chunk_size=5000):
        key = tuple(rec[: len(group_by)])
        outcome, tps, *values = rec[len(group_by) :]
        r = out[key]
        r.samples += 1
        if outcome != "ok":
            r.errors += 1
        if tps is not None:
            r.tps_sum += tps
            r.tps_count += 1
        for metric, value in zip(METRICS, values):
            if value is not None:
                r.hists[metric].add(value)
    return dict(out)
