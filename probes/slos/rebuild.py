"""Recounting one objective from the raw rows kept (`manage.py slo_rebuild`, probes.slos.tasks.rebuild_objective).

Exact against concurrent ingest and its counter (probes.slos.counting.count_pending), without holding either up
for the length of the count:

1. In a transaction of its own: lock the objective FOR UPDATE (waiting for writers in flight, which hold FOR KEY
   SHARE: probes.slos.counting), empty counted_condition and delete its counts. From the commit on, the counter
   and the missed-run pass skip the objective.
2. In one transaction: count the measurements up to the counting position as read (SLOCounted.through: every row
   at or below it is committed), unlocked; then lock the position's row, which waits for a counting pass in flight
   and keeps the next one out until this commit, and count the rows up to the position as it is now; lock the
   objective FOR UPDATE (waiting for the missed-run pass in flight) and count the missed runs that no measurement
   at or below the position replaced; set counted_condition and exact_since, commit. The counter then counts
   the rows above the position for this objective too, taking back the missed runs they replace.

Every call is then counted exactly once. If the objective's condition changed meanwhile (a save enqueues another
rebuild) or another rebuild finished first, the transaction is rolled back and nothing is written.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection, transaction

from probes.slos.classify import add_counts_ctes, days_from_hours_sql
from probes.slos.counting import MEASURED, classified_calls_sql, counted_sql, lock_counted, missed_calls_sql

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rebuilt:
    objective_id: int
    rows: int  # measurements counted (the calls the objective covers)
    missed: int  # missed runs counted
    seconds: float
    exact_since: datetime


class Superseded(Exception):
    """The objective changed, or was rebuilt by someone else, while this rebuild counted."""


def clear(objective_id: int) -> str:
    """Step 1: the objective waits for a rebuild (ingest skips it) with no counts. Returns its fingerprint."""
    from probes.models import ServiceLevelObjective, SLODayCount, SLOFiveMinuteCount, SLOHourCount

    with transaction.atomic():
        objective = ServiceLevelObjective.objects.select_for_update().get(id=objective_id)
        ServiceLevelObjective.objects.filter(id=objective_id).update(counted_condition="", exact_since=None)
        for counts in (SLOHourCount, SLODayCount, SLOFiveMinuteCount):
            counts.objects.filter(objective_id=objective_id).delete()
    return objective.condition_fingerprint()


def _count_rows(cur, objective_id: int, above: int | None, upto: int | None) -> None:
    from probes.models import Measurement, Region, Target

    bounds, params = [], []
    if above is not None:
        bounds.append("id > %s")
        params.append(above)
    if upto is not None:
        bounds.append("id <= %s")
        params.append(upto)
    where = f"WHERE {' AND '.join(bounds)}" if bounds else ""
    source = f"(SELECT {MEASURED} FROM {Measurement._meta.db_table} {where})"
    # Every target x region as the candidate pairs: a scan of the raw rows for their distinct pairs would read
    # them twice.
    pairs = (
        f"(SELECT t.id AS target_id, r.id AS region_id FROM {Target._meta.db_table} t "
        f"CROSS JOIN {Region._meta.db_table} r)"
    )
    # Hours and the recent five minutes; the days are written from the hours at the end.
    counted = add_counts_ctes(classified_calls_sql(source, "o.id = %s", pairs), "slo_rebuilt", days=False)
    cur.execute(f"WITH {counted} SELECT 1", [*params, objective_id])


def rebuild(objective_id: int) -> Rebuilt:
    """Recount one objective from every raw row and missed run kept (see the module). Raises Superseded when
    the objective changed meanwhile, ServiceLevelObjective.DoesNotExist when it is gone."""
    from probes.models import Measurement, MissedRun, ServiceLevelObjective, SLOHourCount

    began = time.monotonic()
    fingerprint = clear(objective_id)
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"SELECT {counted_sql()}")
        (first,) = cur.fetchone()
        _count_rows(cur, objective_id, None, first)
        # Read before the locks (the counter waits while the position's is held): only a late row older than every
        # row kept could make it older, and retention removes the oldest rows first anyway.
        cur.execute(f"SELECT min(scheduled_for) FROM {Measurement._meta.db_table}")
        (oldest,) = cur.fetchone()
        second = lock_counted(cur)
        if second > first:
            _count_rows(cur, objective_id, first, second)
        objective = ServiceLevelObjective.objects.select_for_update().get(id=objective_id)
        if objective.counted_condition or objective.condition_fingerprint() != fingerprint:
            raise Superseded(f"objective {objective_id} changed or was rebuilt while counting")
        measured, missed = Measurement._meta.db_table, MissedRun._meta.db_table
        # A measurement above the position replaces its missed run only once the counter counts it, which takes
        # the missed run back: until then the missed run is counted.
        unmeasured = (
            f"(SELECT mr.target_id, mr.region_id, mr.scheduled_for FROM {missed} mr WHERE NOT EXISTS "
            f"(SELECT 1 FROM {measured} m WHERE m.probe_id = mr.probe_id AND m.region_id = mr.region_id "
            "AND m.scheduled_for = mr.scheduled_for AND m.id <= %s))"
        )
        counted = add_counts_ctes(missed_calls_sql(unmeasured, "o.id = %s"), "slo_rebuilt", days=False)
        cur.execute(f"WITH {counted} SELECT coalesce(sum(missed), 0) FROM slo_rebuilt_hours", [second, objective_id])
        (missed_runs,) = cur.fetchone()
        cur.execute(days_from_hours_sql(), {"objective": objective_id})
        now = datetime.now(UTC)
        exact_since = (oldest or now).astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        ServiceLevelObjective.objects.filter(id=objective_id).update(
            counted_condition=fingerprint, exact_since=exact_since
        )
        cur.execute(
            f"SELECT coalesce(sum(good + bad + excluded - missed), 0) FROM {SLOHourCount._meta.db_table} "
            "WHERE objective_id = %s",
            [objective_id],
        )
        (rows,) = cur.fetchone()
    seconds = time.monotonic() - began
    log.info(
        "slo_rebuild: objective %s recounted from %d raw rows and %d missed runs in %.1f s",
        objective_id,
        rows,
        missed_runs,
        seconds,
    )
    return Rebuilt(objective_id, rows, int(missed_runs), seconds, exact_since)
