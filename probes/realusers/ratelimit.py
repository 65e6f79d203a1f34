"""Requests per minute per ingest source, counted in Postgres so every web process shares the count.

A fixed one-minute window (INSERT ... ON CONFLICT DO UPDATE ... RETURNING count): one statement per request,
no extra service, and exact across processes. Its known weakness, up to twice the limit across a minute's edge,
is harmless for a limit that protects the database from a runaway exporter rather than metering anyone."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection


def admit(source_id: int, now: datetime | None = None) -> int | None:
    """Count one request of the source. None when it is within LATENCY_INGEST_RATE_PER_MINUTE, else the seconds
    until the window ends (for Retry-After, at least 1)."""
    from probes.models import IngestRate

    now = now or datetime.now(UTC)
    minute = now.replace(second=0, microsecond=0)
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {IngestRate._meta.db_table} AS r (source_id, minute, count) VALUES (%s, %s, 1) "
            "ON CONFLICT ON CONSTRAINT ingest_rate_one_per_minute DO UPDATE SET count = r.count + 1 "
            "RETURNING count",
            [source_id, minute],
        )
        count = cur.fetchone()[0]
    if count <= settings.LATENCY_INGEST_RATE_PER_MINUTE:
        return None
    return max(1, math.ceil((minute + timedelta(minutes=1) - now).total_seconds()))
