"""Objectives counted through the real paths: measurements stored by ingest's own code from sealed messages
(probes.ingest.ingest_messages), missed runs by the missed-run pass (probes.fleet.missed.close_slots), recounts by
probes.slos.rebuild.

- `ingest(probe, region, calls)`: store [(slot, result fields)] as one region worker's message; rows stored.
- `counts(objective)`: {field: total} of the objective's hour counts, once the counter has counted every row stored
  (probes.slos.counting.count_pending: ingest counts at most every 2 s).
- `current(objective)`: rebuild it (no raw rows yet: nothing to count) so ingest counts it from now on.
- `hour_ago()`: a whole hour in the past, whose slots are neither ahead nor missed yet.
- `scheduled_since(hours, **probe)`: a probe and its region configured that long ago, so the missed-run pass
  closes their slots since then; (probe, region, now).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db.models import Sum

from probes.ingest import ingest_messages
from tests.factories import measurement_payload, sealed_results

FIELDS = ("good", "degraded", "bad", "missed", "excluded")


def ingest(probe, region, calls: list[tuple[datetime, dict]]) -> int:
    message = sealed_results(region, [measurement_payload(probe, region, slot, **fields) for slot, fields in calls])
    return ingest_messages([((message,), {}, "ingest")])


def counts(objective) -> dict[str, int]:
    from probes.models import SLOHourCount
    from probes.slos.counting import count_pending

    count_pending()
    totals = SLOHourCount.objects.filter(objective=objective).aggregate(**{f: Sum(f) for f in FIELDS})
    return {f: totals[f] or 0 for f in FIELDS}


def current(objective):
    from probes.slos.rebuild import rebuild

    rebuild(objective.id)
    objective.refresh_from_db()
    return objective


def hour_ago() -> datetime:
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)


def scheduled_since(hours: float, **fields):
    from probes.models import Probe, Region
    from tests.factories import ProbeFactory

    probe = ProbeFactory(**fields)
    region = probe.regions.get()
    now = datetime.now(UTC)
    Probe.objects.filter(id=probe.id).update(updated_at=now - timedelta(hours=hours))
    Region.objects.filter(id=region.id).update(updated_at=now - timedelta(hours=hours))
    return probe, region, now
