"""Fixtures of the trust tests: a probe measuring from one region, and a
payload maker for it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from tests.factories import measurement_payload

# Slots a few minutes back: plausible times, distinct per k.
BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


@pytest.fixture
def probe(make_probe):
    return make_probe()


@pytest.fixture
def region(probe):
    return probe.regions.get()


@pytest.fixture
def payloads(probe, region):
    """`payloads(n, start=0)`: n valid measurements of the probe in its region, one slot each."""

    def make(n: int, start: int = 0, *, of_region=None) -> list[dict]:
        where = of_region or region
        return [measurement_payload(probe, where, BASE + timedelta(seconds=k)) for k in range(start, start + n)]

    return make


def ingest(*messages) -> int:
    """The ingest worker's batch, in process: each message the one argument of a task message."""
    from probes.ingest import ingest_messages

    return ingest_messages([((message,), {}, f"probes.ingest[test-{i}]") for i, message in enumerate(messages)])


def every_stored_text() -> str:
    """Every row of every table of ours, as text: where a leaked secret would be."""
    with connection.cursor() as cur:
        cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [name for (name,) in cur.fetchall()]
        texts = []
        for table in tables:
            cur.execute(f'SELECT t::text FROM "{table}" t')
            texts.extend(text for (text,) in cur.fetchall())
    return "\n".join(texts)
