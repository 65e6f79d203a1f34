"""Retention: raw rows older than LATENCY_RETENTION_DAYS are deleted once
their hours are rolled up (so a reading of them stays complete), dead letters
and missed runs follow the same cut, and rollups go after LATENCY_ROLLUP_RETENTION_DAYS when
that is set. Real users' observations and rollups follow the same two settings (prune_real_users).
Region workers' heartbeat history is kept for
LATENCY_HEARTBEAT_HISTORY_HOURS, and a worker not seen for 30 days is forgotten.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection

from probes.retention import delete_older_than
from probes.rollups.build import rebuild_hour
from probes.rollups.periods import DAY, floor_hour

log = logging.getLogger(__name__)


def prune_raw(now: datetime | None = None) -> int:
    """Delete raw measurements older than the retention, in batches, after
    making sure every hour being deleted is rolled up; dead letters follow
    the same retention. Returns the number of measurements deleted."""
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
    deleted = delete_older_than(Measurement, "started_at", cutoff)
    from probes import deadletters

    letters = deadletters.prune(cutoff)
    if letters:
        log.info("pruned %d dead letters received before %s", letters, cutoff.isoformat())
    from probes.fleet.missed import prune_missed

    # Missed runs are read beside the raw rows (samples, errors, missed): kept as long as they are.
    missed = prune_missed(cutoff)
    if missed:
        log.info("pruned %d missed runs scheduled before %s", missed, cutoff.isoformat())
    if settings.LATENCY_ROLLUP_RETENTION_DAYS:
        from probes.models import DailyRollup

        old = floor_hour(now - timedelta(days=settings.LATENCY_ROLLUP_RETENTION_DAYS))
        HourlyRollup.objects.filter(hour__lt=old).delete()
        RollupHour.objects.filter(hour__lt=old).delete()
        # Only days wholly before the cut: the day straddling it loses some
        # marks, so readers stop using its daily row anyway.
        DailyRollup.objects.filter(day__lte=old - DAY).delete()
    prune_workers(now)
    prune_real_users(now)
    return deleted


# The real users' bookkeeping rows, each kept as long as it can still matter: a rate-limit counter for its
# minute (an hour leaves room for clocks and late requests), a resource that sent spans for as long as its
# metric points may describe the same calls (the receiver looks back up to a day; two leave a margin), and a
# cumulative metric stream's last point for a week of silence (an exporter back after that is taken as
# restarted: its next point is counted whole, as for a changed start time).
INGEST_RATE_KEEP = timedelta(hours=1)
SPAN_RESOURCE_KEEP = timedelta(days=2)
METRIC_STREAM_KEEP = timedelta(days=7)


def prune_real_users(now: datetime) -> dict[str, int]:
    """Real users' observations follow LATENCY_RETENTION_DAYS like raw measurements (their hourly rollups are
    written with them, so nothing is left to roll up first), their rollups LATENCY_ROLLUP_RETENTION_DAYS when
    set; and the ingest's bookkeeping rows go once stale. Returns how many of each were deleted."""
    from probes.models import IngestRate, MetricStream, Observation, ObservationRollup, SpanResource

    cutoff = floor_hour(now - timedelta(days=settings.LATENCY_RETENTION_DAYS))
    deleted = {
        "observations": delete_older_than(Observation, "observed_at", cutoff),
        "rollups": 0,
        "ingest_rates": delete_older_than(IngestRate, "minute", now - INGEST_RATE_KEEP),
        "span_resources": delete_older_than(SpanResource, "last_span_at", now - SPAN_RESOURCE_KEEP),
        "metric_streams": delete_older_than(MetricStream, "updated_at", now - METRIC_STREAM_KEEP),
    }
    if settings.LATENCY_ROLLUP_RETENTION_DAYS:
        old = floor_hour(now - timedelta(days=settings.LATENCY_ROLLUP_RETENTION_DAYS))
        deleted["rollups"] = delete_older_than(ObservationRollup, "hour", old)
    if any(deleted.values()):
        log.info("pruned real users' rows: %s", ", ".join(f"{n} {what}" for what, n in deleted.items() if n))
    return deleted


def prune_workers(now: datetime) -> tuple[int, int]:
    """Region workers' heartbeat history beyond LATENCY_HEARTBEAT_HISTORY_HOURS, and workers no heartbeat
    has mentioned for LATENCY_WORKER_FORGET_DAYS (their history goes with them)."""
    from probes.models import Worker, WorkerBeat

    beats = delete_older_than(WorkerBeat, "at", now - timedelta(hours=settings.LATENCY_HEARTBEAT_HISTORY_HOURS))
    forgotten = now - timedelta(days=settings.LATENCY_WORKER_FORGET_DAYS)
    _, per_model = Worker.objects.filter(last_seen__lt=forgotten).delete()
    workers = per_model.get(Worker._meta.label, 0)
    if beats or workers:
        log.info("pruned %d heartbeats and %d workers not seen for long", beats, workers)
    return beats, workers
