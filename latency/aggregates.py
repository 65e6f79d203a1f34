"""Figures that both the dashboard's JSON (latency.api) and the REST API (latency.api_v1) hand out, built once
here from probes.readings, so the two can never show a region or a worker differently.

The other aggregates are a single facade call each (readings.table, phases, series, distribution_rows), made by
both with the same Selection from the same form."""

from __future__ import annotations

from datetime import datetime

from probes import readings
from probes.models import Region
from probes.readings.selection import Selection


def region_summary(f: Selection, now: datetime) -> tuple[list[dict], dict[int, readings.RegionHealth]]:
    """The map's rows (readings.summary), each with its region's health at `now` (status, last_seen), and that
    health by region id: health is read now whatever the window, since a region is dark or live at present."""
    rows = readings.summary(f)
    health = readings.region_health(now, [row["id"] for row in rows])
    # .get: a region deleted between the two reads is simply not judged.
    rows = [
        {**row, "status": h.status, "last_seen": h.last_seen} if (h := health.get(row["id"])) else row for row in rows
    ]
    return rows, health


def worker_json(row: readings.WorkerRow, region_status: str) -> dict:
    """One worker: the issue's fields (region, hostname, release, last_seen, status, in_flight,
    clock_offset_ms), then the rest of what its heartbeat said."""
    return {
        "region": row.region_slug,
        "hostname": row.hostname,
        "release": row.release,
        "last_seen": row.last_seen,
        "status": row.status,
        "in_flight": row.in_flight,
        "clock_offset_ms": row.clock_offset_ms,
        "clock_flagged": row.clock_flagged,
        "region_name": row.region_name,
        "region_status": region_status,
        "name": row.name,
        "state": row.state,
        "started_at": row.started_at,
        "last_run_at": row.last_run_at,
        "runs": row.runs,
        "queue_depth": row.queue_depth,
        "key_id": row.key_id,
    }


def region_statuses(region_ids: list[int], now: datetime) -> dict:
    """Each region's status (live, stale or dark) and when a worker of it was last heard, by slug, for some
    regions (empty: all): what anyone who may read the dashboard sees of the fleet (latency.access.may_see_workers
    decides who sees the workers themselves). "workers" is empty, so both answers have one shape."""
    health = readings.region_health(now, region_ids or None)
    slugs = dict(Region.objects.filter(id__in=list(health)).values_list("id", "slug"))
    return {
        "workers": [],
        "regions": {slug: health[rid].status for rid, slug in slugs.items()},
        "last_seen": {slug: health[rid].last_seen for rid, slug in slugs.items()},
        "now": now,
    }


def workers(region_ids: list[int], now: datetime) -> dict:
    """Region workers heard in the last day (stopped ones briefly), newest first per region, for some regions
    (empty: all), each with its region's status; and every such region's status and last heartbeat by slug."""
    rows = readings.worker_rows(region_ids or None, now)
    statuses = region_statuses(region_ids, now)
    return {
        **statuses,
        "workers": [worker_json(row, statuses["regions"].get(row.region_slug, "dark")) for row in rows],
    }
