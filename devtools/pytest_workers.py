"""Gives each pytest-xdist worker its own Redis database and channel-layer prefix (pytest-django gives it its own
test database, `test_<name>_gw<N>`).

Loaded with `-p devtools.pytest_workers` (pyproject.toml addopts) rather than from tests/conftest.py: pytest-django
reads the Django settings, and so REDIS_URL and LATENCY_CHANNEL_PREFIX, before any conftest is imported, and
pytest-xdist names the worker (PYTEST_XDIST_WORKER) before that. Outside a worker it changes nothing.

Worker gwN takes Redis database (base - N) of LATENCY_TEST_REDIS_URL, so CI's /15 gives 15, 14, 13, ...: the
suite flushes its database, and two workers flushing one would wipe each other's queues.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class WorkerSetupError(RuntimeError):
    """The worker cannot be given a database of its own; the message says what to change."""


def redis_db_of(url: str) -> int:
    """The database number a redis://, rediss:// or unix:// URL names (0 when it names none)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return int(dict(parse_qsl(parts.query)).get("db", 0))
    return int(parts.path.strip("/") or 0)


def with_redis_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = dict(parse_qsl(parts.query))
        query["db"] = str(db)
        # Spelled out: urlunsplit drops the `//` of a URL without a host (unix:///run/redis.sock).
        return f"unix://{parts.netloc}{parts.path}?{urlencode(query)}"
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, ""))


def worker_number(worker_id: str) -> int:
    if not worker_id.startswith("gw") or not worker_id[2:].isdigit():
        raise WorkerSetupError(f"unexpected pytest-xdist worker id {worker_id!r} (expected gw0, gw1, ...)")
    return int(worker_id[2:])


def worker_environment(env: dict[str, str], worker_id: str) -> dict[str, str]:
    """The variables to change for worker `worker_id` (empty when the suite names no Redis of its own)."""
    n = worker_number(worker_id)
    changes = {"LATENCY_CHANNEL_PREFIX": f"{env.get('LATENCY_CHANNEL_PREFIX') or 'latency-test'}-{worker_id}"}
    base = env.get("LATENCY_TEST_REDIS_URL")
    if not base:
        return changes
    base_db = redis_db_of(base)
    db = base_db - n
    if db < 0:
        raise WorkerSetupError(
            f"pytest-xdist worker {worker_id} would need Redis database {base_db} - {n} = {db}: "
            f"LATENCY_TEST_REDIS_URL names database {base_db}, which leaves room for {base_db + 1} workers; "
            "run fewer workers (make test XDIST=...) or name a higher database"
        )
    mine = with_redis_db(base, db)
    changes["LATENCY_TEST_REDIS_URL"] = mine
    # The settings' own Redis follows when it is the suite's (CI names one server for both); the embedded
    # run gives the settings database 0 apart, shared by the workers under their own channel prefixes.
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        if env.get(name) == base:
            changes[name] = mine
    return changes


_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    os.environ.update(worker_environment(dict(os.environ), _worker))
