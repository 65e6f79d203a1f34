"""What the broker outage tests share (the ingest worker surviving a Redis restart, tests/pipeline, and a RabbitMQ
drop, tests/regions_e2e): probes of one region whose slots come every few seconds, a heartbeat held in flight in the
ingest worker, and the check that every slot ended as exactly one row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import psycopg
from django.db import connection

from probes.fleet.missed import close_slots, grace_seconds
from probes.models import Measurement, MissedRun, Worker
from tests.support import wait_for

INTERVAL = 10
TIMEOUT = 5.0


def three_probes(llm_probe, make_probe, slug: str) -> list:
    """Three probes of the mock LLM server from one new region, a slot every INTERVAL seconds each."""
    first = llm_probe(slug=slug, interval=INTERVAL, timeout=TIMEOUT)
    region = first.regions.get()
    return [first] + [
        make_probe(target=first.target, regions=[region], interval_seconds=INTERVAL, timeout_seconds=TIMEOUT)
        for _ in range(2)
    ]


def logged_since(proc, mark: int, text: str) -> bool:
    return text.encode() in proc.log_path.read_bytes()[mark:]


def _waiting_on_the_workers_lock() -> bool:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            [f"%{Worker._meta.db_table}%"],
        )
        return cur.fetchone()[0] > 0


@contextmanager
def a_heartbeat_in_flight(database_url: str) -> Iterator[psycopg.Connection]:
    """A heartbeat held in the ingest worker, in the middle of its task: the region workers' rows locked until
    the caller rolls the returned connection back (as a busy database would hold it). Region workers must beat
    often (LATENCY_HEARTBEAT_SECONDS=1) for one to come soon."""
    wait_for(lambda: Worker.objects.exists(), 60, message="a first heartbeat")
    holder = psycopg.connect(database_url)
    try:
        holder.execute(f"SELECT id FROM {Worker._meta.db_table} FOR UPDATE")
        wait_for(_waiting_on_the_workers_lock, 60, message="a heartbeat in flight, waiting on the lock")
        yield holder
    finally:
        holder.close()


def assert_one_row_per_slot(probes, outage_start: datetime, outage_end: datetime) -> None:
    """Every slot of each probe, from its first stored to its last, ended as exactly one row: a measurement
    (never an error, never two) or, for a slot of the outage only, a missed run."""
    for probe in probes:
        stored = Counter(Measurement.objects.filter(probe=probe).values_list("scheduled_for", flat=True))
        assert [slot for slot, n in stored.items() if n > 1] == []
        assert set(Measurement.objects.filter(probe=probe).values_list("outcome", flat=True)) == {"ok"}
        low, high = min(stored), max(stored)
        # Slots between the first and the last stored one without a row become missed runs.
        close_slots(now=high + timedelta(seconds=grace_seconds(INTERVAL, TIMEOUT) + 1))
        missed = set(
            MissedRun.objects.filter(probe=probe, scheduled_for__gte=low, scheduled_for__lte=high).values_list(
                "scheduled_for", flat=True
            )
        ) - set(stored)
        slots = [
            low + timedelta(seconds=INTERVAL * k) for k in range(int((high - low).total_seconds()) // INTERVAL + 1)
        ]
        assert [slot for slot in slots if slot not in stored and slot not in missed] == []
        # Only slots of the outage are missed: none before it began (less a run's length) and none after the first
        # slot stored after it.
        resumed = min(slot for slot in stored if slot > outage_end)
        earliest = outage_start - timedelta(seconds=INTERVAL + TIMEOUT)
        assert [s for s in missed if not earliest <= s < resumed] == [], (outage_start, outage_end, sorted(missed))
