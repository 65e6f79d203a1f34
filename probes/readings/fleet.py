"""Health you can see: region workers as their heartbeats describe them,
each region's status, and the scheduled runs nobody picked up.

Every reader takes `now` from its caller (a page, the API, a test) rather
than reading the clock itself, so a test can pass time instead of waiting.

Region status, one rule for the map, the region page, the API and the admin:
- live:  a running worker's latest heartbeat is younger than
         LATENCY_REGION_STALE_AFTER (default a minute);
- stale: the newest running worker was heard within LATENCY_REGION_DARK_AFTER
         (default five minutes), but not within the stale limit;
- dark:  anything else: no worker ever, every worker stopped, or silent
         for longer than the dark limit.

Missed runs count only while they still have no measurement: a run that
arrived after its slot was closed wins (the anti-join below).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Max, Q
from django.utils import timezone

LIVE, STALE, DARK = "live", "stale", "dark"
REGION_STATUSES = (LIVE, STALE, DARK)
# A worker's own status: as a region's, plus "stopped" (it said goodbye) and
# "lost" (running by its last word, but silent for longer than the dark limit:
# killed without a chance to say so).
WORKER_LIVE, WORKER_STALE, WORKER_LOST, WORKER_STOPPED = "live", "stale", "lost", "stopped"
WORKER_STATUSES = (WORKER_LIVE, WORKER_STALE, WORKER_LOST, WORKER_STOPPED)
# Start times measured on a host whose clock is off by more than this are off by as much.
CLOCK_FLAG_MS = 1000.0
# How long a worker list shows running workers, and stopped ones.
SHOWN_FOR = timedelta(days=1)
STOPPED_SHOWN_FOR = timedelta(minutes=15)


def stale_after() -> timedelta:
    return timedelta(seconds=settings.LATENCY_REGION_STALE_AFTER)


def dark_after() -> timedelta:
    return timedelta(seconds=settings.LATENCY_REGION_DARK_AFTER)


def clock_flagged(offset_ms: float | None) -> bool:
    return offset_ms is not None and abs(offset_ms) > CLOCK_FLAG_MS


@dataclass(frozen=True)
class WorkerRow:
    """One region-worker process, as the region page, /api/workers and the admin show it."""

    region_id: int
    region_slug: str
    region_name: str
    instance: str
    name: str
    hostname: str
    release: str
    state: str  # as the worker said: running or stopped
    status: str  # WORKER_STATUSES, judged at `now`
    started_at: datetime
    last_seen: datetime
    last_run_at: datetime | None
    runs: int
    in_flight: int
    queue_depth: int | None
    clock_offset_ms: float | None
    clock_flagged: bool
    key_id: str


@dataclass(frozen=True)
class RegionHealth:
    """A region's status, and when a running worker (or, failing one, any worker) was last heard."""

    region_id: int
    status: str
    last_seen: datetime | None  # newest heartbeat of any of its workers; None: never heard


def worker_status(state: str, last_seen: datetime, now: datetime) -> str:
    from probes.models import Worker

    if state == Worker.STOPPED:
        return WORKER_STOPPED
    age = now - last_seen
    if age <= stale_after():
        return WORKER_LIVE
    if age <= dark_after():
        return WORKER_STALE
    return WORKER_LOST


def worker_rows(
    region_ids: Iterable[int] | None = None, now: datetime | None = None, since: timedelta = SHOWN_FOR
) -> list[WorkerRow]:
    """Workers heard within `since` (stopped ones for STOPPED_SHOWN_FOR only:
    a restart leaves a stopped row behind, and a day of them would bury the
    running ones), by region name then newest heartbeat first. region_ids:
    only these regions (None: all)."""
    from probes.models import Worker

    now = now or timezone.now()
    heard = Q(last_seen__gte=now - since, state=Worker.RUNNING) | Q(
        last_seen__gte=now - min(since, STOPPED_SHOWN_FOR), state=Worker.STOPPED
    )
    workers = Worker.objects.filter(heard).select_related("region").order_by("region__name", "-last_seen", "id")
    if region_ids is not None:
        workers = workers.filter(region_id__in=list(region_ids))
    return [
        WorkerRow(
            region_id=w.region_id,
            region_slug=w.region.slug,
            region_name=w.region.name,
            instance=w.instance,
            name=w.name,
            hostname=w.hostname,
            release=w.release,
            state=w.state,
            status=worker_status(w.state, w.last_seen, now),
            started_at=w.started_at,
            last_seen=w.last_seen,
            last_run_at=w.last_run_at,
            runs=w.runs,
            in_flight=w.in_flight,
            queue_depth=w.queue_depth,
            clock_offset_ms=w.clock_offset_ms,
            clock_flagged=clock_flagged(w.clock_offset_ms),
            key_id=w.key_id,
        )
        for w in workers
    ]


def region_health(now: datetime | None = None, region_ids: Iterable[int] | None = None) -> dict[int, RegionHealth]:
    """Every region's (or the given regions') status at `now`; one query over
    the workers (served by the worker_region_seen index)."""
    from probes.models import Region, Worker

    now = now or timezone.now()
    regions = Region.objects.all()
    if region_ids is not None:
        regions = regions.filter(id__in=list(region_ids))
    heard = {
        row["region_id"]: row
        for row in Worker.objects.filter(region_id__in=regions.values("id"))
        .values("region_id")
        .annotate(running=Max("last_seen", filter=Q(state=Worker.RUNNING)), newest=Max("last_seen"))
    }
    health: dict[int, RegionHealth] = {}
    for region_id in regions.values_list("id", flat=True):
        row = heard.get(region_id) or {}
        running, last = row.get("running"), row.get("newest")
        if running is not None and now - running <= stale_after():
            status = LIVE
        elif running is not None and now - running <= dark_after():
            status = STALE
        else:
            status = DARK
        health[region_id] = RegionHealth(region_id, status, last)
    return health


def region_status(now: datetime | None = None) -> dict[int, str]:
    """{region_id: "live" | "stale" | "dark"} for every region."""
    return {region_id: h.status for region_id, h in region_health(now).items()}


def missed_counts(
    window: tuple[datetime, datetime], target_ids: Iterable[int], region_ids: Iterable[int]
) -> dict[tuple[int, int], int]:
    """{(region_id, target_id): n} of runs scheduled in [since, until) that
    were recorded as missed and still have no measurement. The measurement
    side of the anti-join is its unique (probe, region, scheduled_for) index."""
    from probes.models import Measurement, MissedRun

    since, until = window
    targets, regions = list(target_ids), list(region_ids)
    if not targets or not regions:
        return {}
    missed, measured = MissedRun._meta.db_table, Measurement._meta.db_table
    scope = "mr.scheduled_for >= %s AND mr.scheduled_for < %s AND mr.target_id = ANY(%s) AND mr.region_id = ANY(%s)"
    with connection.cursor() as cur:
        # The slots of the missed runs in scope first: planning the anti-join opens every raw partition of the window
        # (on a new connection, many times this statement; docs/benchmarks.md, "Dashboard reads"), and usually there
        # is none; when there are, only the partitions of the days between the first and the last.
        cur.execute(f"SELECT min(mr.scheduled_for), max(mr.scheduled_for) FROM {missed} mr WHERE {scope}",
                    [since, until, targets, regions])  # fmt: skip
        first, last = cur.fetchone()
        if first is None:
            return {}
        cur.execute(
            f"""
            SELECT mr.region_id, mr.target_id, count(*)
            FROM {missed} mr
            WHERE {scope} AND mr.scheduled_for >= %s AND mr.scheduled_for <= %s
              AND NOT EXISTS (
                SELECT 1 FROM {measured} m
                WHERE m.probe_id = mr.probe_id AND m.region_id = mr.region_id AND m.scheduled_for = mr.scheduled_for
                  -- The missed slots' range again, for the planner: only those days' slot-time partitions.
                  AND m.scheduled_for >= %s AND m.scheduled_for <= %s
              )
            GROUP BY mr.region_id, mr.target_id
            """,
            [since, until, targets, regions, first, last, first, last],
        )
        return {(region_id, target_id): n for region_id, target_id, n in cur.fetchall()}
