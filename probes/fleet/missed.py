"""Scheduled runs that no worker picked up, recorded as MissedRun rows.

A slot of an enabled probe in an active region is closed once it is due
longer ago than its grace: the interval (the run may start that late), the
probe's timeout (it may run that long), the broker's visibility timeout (a
killed worker's run is delivered again that much later) and 30 s for the
ingest. A closed slot without a measurement is a missed run.

One pass looks back LATENCY_MISSED_LOOKBACK seconds behind each probe's
grace line, so it is idempotent (ON CONFLICT DO NOTHING on the slot key)
and a pass that did not run for a while (central outage, restart) is made
up by the next one within that bound. Nothing is counted before
max(probe.updated_at, region.updated_at): a probe just created, re-enabled
or re-timed, or a region just (re)activated, has missed nothing before it.
(Ticking a region on a probe in code without saving the probe does not move
updated_at; the admin saves the probe.)

Slots come from probes.scheduling's arithmetic (slot_offset, current_slot),
computed here per probe; the database then expands each probe's range with
generate_series and keeps the slots without a measurement, in one statement.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction

from probes.rollups.locks import LockSpace
from probes.scheduling import current_slot, slot_offset
from probes.slos.counting import lock_objectives, missed_counts_ctes

log = logging.getLogger(__name__)

# Added to every grace: the ingest's own delay between a run's end and its row.
INGEST_MARGIN_S = 30


def grace_seconds(interval: int, timeout: float) -> float:
    return interval + float(timeout) + settings.LATENCY_VISIBILITY_TIMEOUT + INGEST_MARGIN_S


def slot_ranges(probes, now: datetime) -> tuple[list[int], list[int], list[int], list[int]]:
    """(probe ids, first slot, last slot, interval) as epoch seconds, per
    probe: the slots due before the probe's grace line and within the look-back."""
    ids, firsts, lasts, intervals = [], [], [], []
    now_ts = now.timestamp()
    for probe_id, every, timeout in probes:
        interval = int(every)
        offset = slot_offset(probe_id, interval)
        line = now_ts - grace_seconds(interval, timeout)
        last = current_slot(line, interval, offset)
        first = current_slot(line - settings.LATENCY_MISSED_LOOKBACK, interval, offset)
        if first < line - settings.LATENCY_MISSED_LOOKBACK:
            first += interval  # the slot holding the look-back's start began before it
        if first > last:
            continue
        ids.append(probe_id)
        firsts.append(first)
        lasts.append(last)
        intervals.append(interval)
    return ids, firsts, lasts, intervals


def close_slots(now: datetime | None = None) -> int:
    """Record a MissedRun for every closed slot without a measurement (see
    the module). Returns how many were recorded by this call."""
    from probes.models import Measurement, MissedRun, Probe, Region, ServiceLevelObjective

    now = now or datetime.now(UTC)
    probes = list(Probe.objects.filter(enabled=True).values_list("id", "interval_seconds", "timeout_seconds"))
    ids, firsts, lasts, intervals = slot_ranges(probes, now)
    if not ids:
        return 0
    missed, measured = MissedRun._meta.db_table, Measurement._meta.db_table
    probe_table, region_table = Probe._meta.db_table, Region._meta.db_table
    through = Probe.regions.through._meta.db_table
    with transaction.atomic(), connection.cursor() as cur:
        counting = ServiceLevelObjective.objects.filter(enabled=True).exists()
        if counting:
            # Exclusive against ingest until commit: a measurement committed while its slot is closed would
            # otherwise be stored and leave the slot counted missed in the objectives too (each statement blind
            # to the other's uncommitted row); now one of them sees the other. Taken before the objectives' row
            # locks, in ingest's order (probes.slos.counting), so the two cannot deadlock.
            cur.execute("SELECT pg_advisory_xact_lock(%s, 0)", [int(LockSpace.INGEST_IDS)])
            counting = lock_objectives(cur)
        counted = f", {missed_counts_ctes('recorded')}" if counting else ""
        cur.execute(
            f"""
            WITH recorded AS (
            INSERT INTO {missed} (probe_id, target_id, region_id, scheduled_for, recorded_at)
            SELECT p.id, p.target_id, r.id, slot.at, %s
            FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::int[]) AS s(probe_id, first, last, step)
            JOIN {probe_table} p ON p.id = s.probe_id AND p.enabled
            JOIN {through} pr ON pr.probe_id = p.id
            JOIN {region_table} r ON r.id = pr.region_id AND r.active
            CROSS JOIN LATERAL (
                SELECT to_timestamp(t) AS at FROM generate_series(s.first, s.last, s.step) AS t
            ) AS slot
            WHERE slot.at >= greatest(p.updated_at, r.updated_at)
              AND NOT EXISTS (
                SELECT 1 FROM {measured} m
                WHERE m.probe_id = p.id AND m.region_id = r.id AND m.scheduled_for = slot.at
                  -- Every slot's range again, as constants: only the look-back's slot-time partitions are planned.
                  AND m.scheduled_for >= to_timestamp(%s) AND m.scheduled_for <= to_timestamp(%s)
              )
            ON CONFLICT (probe_id, region_id, scheduled_for) DO NOTHING
            RETURNING target_id, region_id, scheduled_for
            ){counted}
            SELECT count(*) FROM recorded
            """,
            [now, ids, firsts, lasts, intervals, min(firsts), max(lasts)],
        )
        (recorded,) = cur.fetchone()
    if recorded:
        log.info("recorded %d missed runs (slots due before the grace line with no measurement)", recorded)
    return recorded


def prune_missed(cutoff: datetime) -> int:
    """Missed runs scheduled before `cutoff` (the raw measurements' retention), in batches."""
    from probes.models import MissedRun
    from probes.retention import delete_older_than

    return delete_older_than(MissedRun, "scheduled_for", cutoff)
