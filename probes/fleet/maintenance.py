"""Maintenance tasks run only when the central side asked for them.

Anyone holding the broker URL could queue `probes.prune` or a rollup; a
region host holds that URL. So the central scheduler signs each maintenance
message it sends (Django's signing, with the site's SECRET_KEY, which no
region host has), and the task refuses a message without a fresh signature.
"""

from __future__ import annotations

from django.core import signing

SALT = "latency.maintenance"


def central_token(task_name: str) -> str:
    """The `token` kwarg the central scheduler adds to a maintenance task."""
    return signing.dumps({"task": task_name}, salt=SALT, compress=False)


def refusal(task_name: str, token: object, *, max_age_s: float) -> str | None:
    """Why this maintenance message must not run, or None when the central
    side sent it within the last `max_age_s` seconds."""
    if not isinstance(token, str) or not token:
        return f"maintenance task {task_name} arrived without the central signature: not run"
    try:
        value = signing.loads(token, salt=SALT, max_age=max_age_s)
    except signing.SignatureExpired:
        return f"maintenance task {task_name} carries a signature older than {max_age_s:g} s: not run"
    except signing.BadSignature:
        return f"maintenance task {task_name} carries a bad signature (not the central site's): not run"
    if not isinstance(value, dict) or value.get("task") != task_name:
        return f"maintenance task {task_name} carries a signature for another task: not run"
    return None


# The tasks only the central scheduler may send: it signs each of them
# (probes.scheduling.SlotScheduler), and each checks first (`refused`).
# probes.deliver_notification is sent by the central side too (probes.alerts.notify.queue), signed the same way,
# and so is probes.slos.rebuild_objective (probes.slos.services.queue_rebuild).
MAINTENANCE_TASKS = frozenset(
    {
        "probes.rollup_recent",
        "probes.prune",
        "probes.ensure_partitions",
        "probes.close_slots",
        "probes.evaluate_alerts",
        "probes.deliver_notification",
        "probes.slos.rebuild_objective",
        "probes.slos.count_calls",
    }
)
DEAD_LETTER_SOURCE = "maintenance"
# What of a refused message's arguments is kept: enough to recognise it.
_KEPT_CHARS = 500


def beat_interval(task_name: str) -> float:
    """Seconds between two sends of `task_name` by the central beat
    (settings.CELERY_BEAT_SCHEDULE): a token older than that is not from
    the latest send."""
    from django.conf import settings

    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        if entry.get("task") == task_name:
            schedule = entry["schedule"]
            return float(schedule.total_seconds() if hasattr(schedule, "total_seconds") else schedule)
    raise LookupError(f"{task_name} is not in CELERY_BEAT_SCHEDULE")


def refused(task_name: str, token: object, *, max_age_s: float | None = None, **arrived: object) -> bool:
    """True when this maintenance message must not run: then it has been
    logged (one warning) and kept as a dead letter with the reason and what
    arrived (`arrived`: the task's other arguments). Call it first thing in
    the task, with the `token` kwarg it was sent: `if refused(NAME, token): return None`.
    `max_age_s` defaults to the task's beat interval."""
    from probes import deadletters

    reason = refusal(task_name, token, max_age_s=beat_interval(task_name) if max_age_s is None else max_age_s)
    if reason is None:
        return False
    kept = {"task": task_name, "token": token if not isinstance(token, str) else token[:_KEPT_CHARS]}
    if arrived:
        kept["arguments"] = {name: repr(value)[:_KEPT_CHARS] for name, value in arrived.items()}
    deadletters.reject_message(kept, source=DEAD_LETTER_SOURCE, reason=reason, keep=True)
    return True
