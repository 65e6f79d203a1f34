"""Liveness and readiness for orchestrators (issue 51): `/healthz` says the process answers, `/readyz` says it can
serve: the database reachable, every migration applied, the broker reachable; otherwise 503 naming what is not.

Answered by the first middleware, before anything that could turn a probe away: an orchestrator asks by the pod's
or container's address, which ALLOWED_HOSTS does not list (get_host would give 400), over plain HTTP on the
container's port (SecurityMiddleware's HTTPS redirect would give 301), with no session or cookie. Both are public
and say nothing an outsider could use: a failed check is named with the class of its error only; the error itself
(which can hold an address) goes to the log.

Our own code rather than a health-check package (django-health-check): three checks, none of its models or
threads, and the processes without Django (the region worker) cannot use one anyway.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse
from kombu.exceptions import KombuError

log = logging.getLogger(__name__)

LIVE, READY = "/healthz", "/readyz"
# Seconds the broker may take to answer a readiness check: an orchestrator's probe times out after a few.
BROKER_TIMEOUT_S = 2.0

# Once every migration is applied it stays so for this process's life: new migrations come with new code, hence a
# new process. Until then each check reads the plan again (a deploy's new web process waits for `migrate`).
_state = {"migrated": False}


def forget() -> None:
    """Read the migrations again on the next check (tests that unapply one)."""
    _state["migrated"] = False


def _database() -> str:
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
    return "ok"


def _migrations() -> str:
    if _state["migrated"]:
        return "ok"
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        return f"{len(plan)} not applied: run manage.py migrate"
    _state["migrated"] = True
    return "ok"


def _broker() -> str:
    from latency.celery import app

    # The URL from the settings, read now (the app's options, TLS included, still apply).
    with app.connection_for_write(settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT_S)
    return "ok"


CHECKS: tuple[tuple[str, Callable[[], str]], ...] = (
    ("database", _database),
    ("migrations", _migrations),
    ("broker", _broker),
)


def readiness() -> dict[str, str]:
    """{check: "ok" or why not}, in CHECKS' order; the migrations are not read without a database."""
    out: dict[str, str] = {}
    for name, check in CHECKS:
        if name == "migrations" and out.get("database") != "ok":
            out[name] = "not checked: no database"
            continue
        try:
            out[name] = check()
        # kombu raises its own OperationalError for a broker it cannot reach (ensure_connection re-raises
        # the transport's error as it).
        except (DatabaseError, OSError, KombuError) as exc:
            out[name] = f"unreachable ({type(exc).__name__})"
            log.warning("readiness: %s failed: %s", name, exc)
    return out


def _answer(status: int, body: dict) -> HttpResponse:
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response


class HealthMiddleware:
    """First in MIDDLEWARE (see the module): GET or HEAD of LIVE or READY is answered here."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path not in (LIVE, READY) or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        if path == LIVE:
            return _answer(200, {"status": "live"})
        checks = readiness()
        ready = all(value == "ok" for value in checks.values())
        return _answer(200 if ready else 503, {"status": "ready" if ready else "not ready", "checks": checks})
