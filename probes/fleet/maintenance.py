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
