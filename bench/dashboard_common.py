"""What bench/dashboard.py's modules share: the bench database and its environment, logging, percentiles."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devtools import harness  # noqa: E402
from devtools.harness import BenchError  # noqa: E402

BENCH_DB = "latency_dashbench"
BENCH_REDIS_DB = 13  # tests use 15 (or LATENCY_TEST_REDIS_URL), bench/ingest.py 14
CHANNEL_PREFIX = "latency-dashbench"
USERNAME = "dashbench"
PASSWORD = "dashbench-password-not-secret"
META_TABLE = "dashbench_meta"
GOAL_P95_MS = 150.0


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def bench_env(db_name: str) -> dict[str, str]:
    if db_name == "latency" or db_name.startswith("test"):
        raise BenchError(f"refusing database {db_name!r}: the bench must not touch the dev or test databases")
    if urlsplit(os.environ.get("REDIS_URL") or "redis://").scheme == "unix":
        raise BenchError("the dashboard bench needs a redis:// URL in REDIS_URL")
    return harness.bench_env(
        db_name,
        channel_prefix=CHANNEL_PREFIX,
        redis_db=BENCH_REDIS_DB,
        extra={"LATENCY_PUBLIC_DASHBOARD": "false", "DEBUG": "false"},
    )


def admin_conninfo(dbname: str = "postgres") -> dict:
    from django.conf import settings

    db = settings.DATABASES["default"]
    info = {
        "dbname": dbname,
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or None,
        "port": db["PORT"] or None,
    }
    return {k: v for k, v in info.items() if v is not None}


def bench_connect(autocommit: bool = False):
    """A plain psycopg connection to the bench database (Django's settings name it)."""
    import psycopg
    from django.conf import settings

    return psycopg.connect(**admin_conninfo(settings.DATABASES["default"]["NAME"]), autocommit=autocommit)


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q of the samples at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]
