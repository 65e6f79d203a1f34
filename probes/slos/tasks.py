"""Celery tasks of the objectives (registered through probes.tasks, the app's task module)."""

from __future__ import annotations

from celery import shared_task

REBUILD_TASK = "probes.slos.rebuild_objective"
COUNT_TASK = "probes.slos.count_calls"
# A rebuild is queued on commit of a save and may wait behind others; a day is long enough for any backlog.
REBUILD_TOKEN_MAX_AGE_S = 24 * 3600


@shared_task(
    name=REBUILD_TASK,
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=3,
    # A 30-day recount of one objective reads every raw row kept: minutes on a large table, never an hour.
    time_limit=3600,
    soft_time_limit=3500,
    expires=REBUILD_TOKEN_MAX_AGE_S,
)
def rebuild_objective(self, objective_id: int, token: str | None = None) -> int | None:
    """Recount one objective from raw rows (probes.slos.rebuild). Sent by the central side only (a save's
    probes.slos.services.objective_saved), signed like the maintenance tasks. Returns the calls counted."""
    from django.db import OperationalError

    from probes.fleet.maintenance import refused
    from probes.models import ServiceLevelObjective
    from probes.slos.rebuild import Superseded, rebuild

    if refused(REBUILD_TASK, token, max_age_s=REBUILD_TOKEN_MAX_AGE_S, objective_id=objective_id):
        return None
    try:
        return rebuild(objective_id).rows
    except (ServiceLevelObjective.DoesNotExist, Superseded):
        return None  # deleted, or changed again: the later save queued the rebuild that counts
    except OperationalError as exc:
        raise self.retry(exc=exc, countdown=60, kwargs={"objective_id": objective_id, "token": token}) from None


@shared_task(name=COUNT_TASK, ignore_result=True, time_limit=600, soft_time_limit=590, expires=14)
def count_calls(token: str | None = None) -> int | None:
    """Count the measurements stored since the last count for every current objective (probes.slos.counting), on
    the central beat's schedule (settings.CELERY_BEAT_SCHEDULE): what ingest's own counting left (a burst's last
    rows, a process that stopped). Two at once are safe: the second waits for the first's lock, then finds less or
    nothing to count. Returns the measurements counted."""
    from probes.fleet.maintenance import refused
    from probes.slos.counting import count_pending

    if refused(COUNT_TASK, token):
        return None
    return count_pending()
