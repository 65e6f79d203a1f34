"""What happens after an objective is saved (the admin, the REST API and `atlas apply` call objective_saved on
commit): a new condition or coverage makes the stored counts another objective's, so they are emptied and a
rebuild from raw rows is queued (not for a disabled objective: ingest does not count it, so its counts would go
stale; re-enabling it rebuilds them).

Coverage also changes where no objective is saved: a model group's targets are edited, a target is deleted.
reconcile, run by every alert evaluation pass (each minute), compares each counted objective's fingerprint with
the one its counts were made under and treats a difference as a save. A silence created, moved or deleted in the
admin over time already counted reclassifies calls of objectives excluding silences: silence_changed recounts
them."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.db.models import Q

log = logging.getLogger(__name__)


def objective_saved(objective_id: int, *, recount: bool = False) -> bool:
    """When the objective's fingerprint (its condition and coverage: ServiceLevelObjective.condition_fingerprint)
    is not the one its counts were made under, empty the counts and counted_condition (a compare-and-swap on the
    value read, under the row lock that waits for ingest's counting in flight: probes.slos.counting) and, when it
    is enabled, queue its rebuild once that commits. With recount, do so even when the fingerprint is the same
    (what classifies the calls changed outside the objective: silence_changed). True when a rebuild was queued."""
    from probes.models import ServiceLevelObjective, SLODayCount, SLOFiveMinuteCount, SLOHourCount

    with transaction.atomic():
        objective = ServiceLevelObjective.objects.select_for_update().filter(id=objective_id).first()
        if objective is None:
            return False
        fingerprint = objective.condition_fingerprint()
        if objective.counted_condition == fingerprint and not (recount and objective.counted_condition):
            return False
        swapped = ServiceLevelObjective.objects.filter(
            id=objective_id, counted_condition=objective.counted_condition
        ).update(counted_condition="", exact_since=None)
        if not swapped:
            return False
        for counts in (SLOHourCount, SLODayCount, SLOFiveMinuteCount):
            counts.objects.filter(objective_id=objective_id).delete()
        if not objective.enabled:
            log.info("objective %s: disabled, counts emptied until it is enabled again", objective_id)
            return False
        transaction.on_commit(lambda: queue_rebuild(objective_id))
    return True


def reconcile() -> list[int]:
    """objective_saved for every objective whose counts were made under another fingerprint than its own now
    (read without a lock: only a difference takes the row lock). The ids it queued a rebuild for."""
    from probes.models import ServiceLevelObjective

    queued = []
    for objective in ServiceLevelObjective.objects.exclude(counted_condition=""):
        if objective.condition_fingerprint() != objective.counted_condition and objective_saved(objective.id):
            queued.append(objective.id)
    return queued


def queue_rebuild(objective_id: int) -> None:
    from probes.celery_app import site_app
    from probes.fleet.maintenance import central_token
    from probes.slos.tasks import REBUILD_TASK

    # By name through the site's app, whose routes put it on the maintenance queue (as probes.alerts.notify).
    site_app().send_task(
        REBUILD_TASK, kwargs={"objective_id": objective_id, "token": central_token(REBUILD_TASK)}, retry=True
    )
    log.info("objective %s: condition changed, counts emptied, rebuild queued", objective_id)


def silence_changed(target_id: int, spans: list[tuple[datetime, datetime]], now: datetime) -> list[int]:
    """A silence of target_id was created, moved or deleted in the admin (`spans`: its span before and after).
    Calls already counted inside a span that began before now were classified by the silences as they were: the
    objectives excluding silences that cover the target are recounted. (The incident pages' silence starts now
    and ends now or is deleted before it starts: no call counted so far changes class, nothing is recounted.)
    The ids queued."""
    from probes.models import ServiceLevelObjective

    if not any(start < now for start, _ in spans):
        return []
    objectives = (
        ServiceLevelObjective.objects.filter(Q(targets=target_id) | Q(model_group__targets=target_id))
        .filter(exclude_silences=True, enabled=True)
        .exclude(counted_condition="")
        .values_list("id", flat=True)
        .distinct()
    )
    return [objective_id for objective_id in objectives if objective_saved(objective_id, recount=True)]
