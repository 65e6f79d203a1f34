"""Retention: raw rows older than LATENCY_RETENTION_DAYS go once their hours are rolled up (so a reading of them
stays complete): whole day partitions are dropped (probes.partitions; a day goes once all its rows are past the
cut, so a row may outlive the retention by up to a day), rows left in the default partition are deleted; dead letters
and missed runs follow the same cut, and rollups go after LATENCY_ROLLUP_RETENTION_DAYS when
that is set. Real users' observations and rollups follow the same two settings (prune_real_users).
Region workers' heartbeat history is kept for
LATENCY_HEARTBEAT_HISTORY_HOURS, and a worker not seen for 30 days is forgotten.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.db import OperationalError, connection

from probes import partitions
from probes.retention import delete_older_than, delete_table_rows_older_than
from probes.rollups.build import rebuild_hour
from probes.rollups.catalogue import KINDS, MARKS
from probes.rollups.periods import floor_hour, hours_between
from probes.slot_time import SLOT_EARLY, SLOT_LATE

log = logging.getLogger(__name__)


def prune_raw(now: datetime | None = None) -> int:
    """Drop the day partitions of raw measurements wholly older than the retention, and delete the older rows
    still in the default partition in batches, after making sure every hour they can fall in is rolled up; dead
    letters follow the same retention. Returns the number of measurements dropped or deleted."""
    now = now or datetime.now(UTC)
    cutoff = floor_hour(now - timedelta(days=settings.LATENCY_RETENTION_DAYS))
    deleted = _drop_old_days(partitions.MEASUREMENTS, cutoff) + _prune_default(cutoff)
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
        prune_rollups(floor_hour(now - timedelta(days=settings.LATENCY_ROLLUP_RETENTION_DAYS)))
    prune_workers(now)
    prune_real_users(now)
    return deleted


def prune_rollups(old: datetime) -> dict[str, int]:
    """Every kind of rollup (probes.rollups.catalogue) and every mark wholly before `old`, the rollup retention's
    cut. Returns rows deleted per kind and mark. The marks go first: a reader meanwhile then reads those hours as
    unmarked, never as marked hours whose rows are gone."""
    deleted = {}
    for mark in MARKS:
        pruner = mark.pruner_function()
        if pruner is not None:
            deleted[mark.name] = pruner(old)
    for kind in KINDS:
        deleted[kind.name] = kind.pruner_function()(old)
    return deleted


def prune_hourly(old: datetime) -> int:
    from probes.models import HourlyRollup

    return HourlyRollup.objects.filter(hour__lt=old).delete()[0]


def prune_hour_marks(old: datetime) -> int:
    from probes.models import RollupHour

    return RollupHour.objects.filter(hour__lt=old).delete()[0]


def prune_hour_cuts(old: datetime) -> int:
    from probes.models import HourCut

    return HourCut.objects.filter(hour__lt=old).delete()[0]


# The real users' bookkeeping rows, each kept as long as it can still matter: a rate-limit counter for its
# minute (an hour leaves room for clocks and late requests), a resource that sent spans for as long as its
# metric points may describe the same calls (the receiver looks back up to a day; two leave a margin), and a
# cumulative metric stream's last point for a week of silence (an exporter back after that is taken as
# restarted: its next point is counted whole, as for a changed start time).
INGEST_RATE_KEEP = timedelta(hours=1)
SPAN_RESOURCE_KEEP = timedelta(days=2)
METRIC_STREAM_KEEP = timedelta(days=7)


def droppable_days(spec: partitions.PartitionedTable, cutoff: datetime, late: timedelta) -> list[date]:
    """The days whose partition holds only rows older than `cutoff`: rows of a day's partition started at most
    `late` after the day's end (probes.slot_time.SLOT_LATE for measurements)."""
    if not partitions.is_partitioned(spec):
        return []
    return [day for day in sorted(partitions.existing_days(spec)) if partitions.day_bounds(day)[1] + late <= cutoff]


def _drop_old_days(
    spec: partitions.PartitionedTable, cutoff: datetime, *, late: timedelta = SLOT_LATE, rolled_up: bool = True
) -> int:
    """Drop the partitions of the days wholly past `cutoff`. `rolled_up`: raw measurements, whose hours must be
    rolled up first (observations' rollups are written with them)."""
    dropped = 0
    for day in droppable_days(spec, cutoff, late):
        low, high = partitions.day_bounds(day)
        # Every started_at hour a row of this day can fall in (probes.slot_time), rolled up before the rows go:
        # readings of the period then come from rollups, the same as before the drop.
        if rolled_up and not _rolled_up(hours_between(low - SLOT_EARLY, high + SLOT_LATE)):
            log.warning("retention: %s's partition of %s kept: an hour of it is being written", day, spec.table)
            continue
        try:
            rows = partitions.drop_day(spec, day)
        except OperationalError as exc:
            if not partitions.lock_timed_out(exc):
                raise
            log.warning(
                "retention: %s's partition of %s not dropped now (%s); the next prune tries again", day, spec.table, exc
            )
            continue
        log.info("retention: dropped %s's partition of %s (%d rows)", day, spec.table, rows)
        dropped += rows
    return dropped


def _prune_default(cutoff: datetime) -> int:
    """Rows past the cutoff in the default partition (written before their day's partition existed, and whose day
    never got one): deleted in batches as before partitions, their hours rolled up first."""

    table = _rows_left(partitions.MEASUREMENTS)
    with connection.cursor() as cur:
        cur.execute(f"SELECT DISTINCT date_trunc('hour', started_at) FROM {table} WHERE started_at < %s", [cutoff])
        raw_hours = {row[0] for row in cur.fetchall()}
    if not _rolled_up(raw_hours):
        log.warning("retention: old rows of %s kept: an hour of them is being written", table)
        return 0
    return _delete_from_default(partitions.MEASUREMENTS, "started_at", cutoff)


def _rolled_up(hours) -> bool:
    """Roll up the hours not marked yet; whether all of them are marked now. A rebuild leaves its hour unmarked
    when an ingest wrote into it meanwhile (probes.rollups.locks: the version compare-and-swap), and rows may go
    only once every hour they fall in is marked: the readers then take those hours from rollups alone."""
    from probes.models import RollupHour

    hours = set(hours)
    marked = set(RollupHour.objects.filter(hour__in=hours).values_list("hour", flat=True))
    for hour in sorted(hours - marked):
        rebuild_hour(hour)
    return RollupHour.objects.filter(hour__in=hours).count() == len(hours)


def _rows_left(spec: partitions.PartitionedTable) -> str:
    """Where rows past the cut remain once the old days are dropped: the default partition (the whole table
    before the migration that partitions it)."""
    return spec.default_name if partitions.is_partitioned(spec) else spec.table


def _delete_from_default(spec: partitions.PartitionedTable, column: str, cutoff: datetime) -> int:
    return delete_table_rows_older_than(_rows_left(spec), column, cutoff)


def prune_real_users(now: datetime) -> dict[str, int]:
    """Real users' observations follow LATENCY_RETENTION_DAYS like raw measurements (their hourly rollups are
    written with them, so nothing is left to roll up first), their rollups LATENCY_ROLLUP_RETENTION_DAYS when
    set; and the ingest's bookkeeping rows go once stale. Returns how many of each were deleted."""
    from probes.models import IngestRate, MetricStream, ObservationRollup, SpanResource

    cutoff = floor_hour(now - timedelta(days=settings.LATENCY_RETENTION_DAYS))
    deleted = {
        "observations": _drop_old_days(partitions.OBSERVATIONS, cutoff, late=timedelta(0), rolled_up=False)
        + _delete_from_default(partitions.OBSERVATIONS, "observed_at", cutoff),
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
