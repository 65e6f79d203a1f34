"""The broker killed in the middle of a stream of runs and started again (the same Redis, on the same port, from
its append-only file): the ingest worker reconnects as the region worker and the scheduler do, and is still the
same process; rows keep arriving, and every slot ends as exactly one row: a measurement, or a missed run for a
slot that fell in the outage (never an error, never two measurements).

It used to exit: at the connection loss Celery cancelled the tasks in flight, and the thread pool cannot cancel
one ("does not implement kill_job"): an unrecoverable error, and the ingest stopped for good. A task is in
flight here for sure: the test holds a lock on the region workers' rows, so a heartbeat waits on it in the
ingest worker (as one does on a busy database) when the broker goes."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
import redis
from django.db import connection

from devtools.embedded import EmbeddedRedis
from probes.fleet.missed import close_slots, grace_seconds
from probes.models import Measurement, MissedRun, Worker
from probes.worker.protocol import region_queue
from tests.support import wait_for

pytestmark = pytest.mark.timeout(420)

INTERVAL = 10
TIMEOUT = 5.0


def _logged_since(proc, mark: int, text: str) -> bool:
    return text.encode() in proc.log_path.read_bytes()[mark:]


def _waiting_on_a_lock() -> bool:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            [f"%{Worker._meta.db_table}%"],
        )
        return cur.fetchone()[0] > 0


def test_the_ingest_worker_reconnects_after_a_broker_restart_and_every_slot_has_one_row(
    pipeline, llm_probe, make_probe, tmp_path
):
    first = llm_probe(slug="test-quito", interval=INTERVAL, timeout=TIMEOUT)
    region = first.regions.get()
    probes = [first] + [
        make_probe(target=first.target, regions=[region], interval_seconds=INTERVAL, timeout_seconds=TIMEOUT)
        for _ in range(2)
    ]
    broker = EmbeddedRedis(tmp_path / "broker")
    url = broker.start()
    client = redis.Redis.from_url(url)
    holder = None
    try:
        ingest = pipeline.start_ingest(REDIS_URL=url)
        # Heartbeats every second: one soon waits on the test's lock.
        worker = pipeline.start_region(region.slug, REDIS_URL=url, LATENCY_HEARTBEAT_SECONDS="1")
        scheduler = pipeline.start_scheduler(REDIS_URL=url)
        wait_for(lambda: Measurement.objects.count() >= 4, 120, message="rows before the outage")
        wait_for(lambda: Worker.objects.exists(), 60, message="a heartbeat")
        ingest_pid = ingest.pid
        marks = {proc: len(proc.log_path.read_bytes()) for proc in (ingest, worker, scheduler)}

        holder = psycopg.connect(pipeline.database_url)
        holder.execute(f"SELECT id FROM {Worker._meta.db_table} FOR UPDATE")
        wait_for(_waiting_on_a_lock, 60, message="a heartbeat in flight, waiting on the lock")
        killed_at = datetime.now(UTC)
        broker.kill()
        for proc, sign in ((ingest, "Connection to broker lost"), (worker, "Connection to broker lost")):
            wait_for(
                lambda proc=proc, sign=sign: _logged_since(proc, marks[proc], sign),
                60,
                message=f"{proc.args[0]} to notice",
            )
        wait_for(
            lambda: _logged_since(scheduler, marks[scheduler], "redis unavailable"),
            60,
            message="the scheduler to notice",
        )
        holder.rollback()  # the heartbeat goes on, and finds no broker to answer through
        broker.restart()
        back_at = datetime.now(UTC)

        # Rows keep arriving: two slots of every probe after the restart, stored by the same ingest process.
        wait_for(
            lambda: all(Measurement.objects.filter(probe=p, scheduled_for__gt=back_at).count() >= 2 for p in probes),
            150,
            message="rows after the restart",
        )
        assert ingest.popen.poll() is None and ingest.pid == ingest_pid, ingest.log()
        assert b"does not implement kill_job" not in ingest.log_path.read_bytes()

        # No new slots; what was published is run and stored, and nothing is left unacknowledged.
        scheduler.stop()
        wait_for(
            lambda: (
                client.llen(region_queue(region.slug)) == 0
                and client.llen("ingest") == 0
                and client.hlen("unacked") == 0
            ),
            120,
            message="the broker to drain",
        )
        assert ingest.popen.poll() is None, ingest.log()

        for probe in probes:
            stored = Counter(Measurement.objects.filter(probe=probe).values_list("scheduled_for", flat=True))
            assert [slot for slot, n in stored.items() if n > 1] == []
            assert set(Measurement.objects.filter(probe=probe).values_list("outcome", flat=True)) == {"ok"}
            low, high = min(stored), max(stored)
            # Slots between the first and the last stored one without a row become missed runs.
            close_slots(now=high + timedelta(seconds=grace_seconds(INTERVAL, TIMEOUT) + 1))
            missed = set(MissedRun.objects.filter(probe=probe, scheduled_for__gte=low, scheduled_for__lte=high))
            missed_slots = {m.scheduled_for for m in missed} - set(stored)
            slots = [
                low + timedelta(seconds=INTERVAL * k) for k in range(int((high - low).total_seconds()) // INTERVAL + 1)
            ]
            assert [slot for slot in slots if slot not in stored and slot not in missed_slots] == []
            # Only slots of the outage are missed: none before it began (less a run's length) and none after
            # the first slot stored after it.
            resumed = min(slot for slot in stored if slot > back_at)
            outside = [s for s in missed_slots if not killed_at - timedelta(seconds=INTERVAL + TIMEOUT) <= s < resumed]
            assert outside == [], (killed_at, back_at, sorted(missed_slots))
    finally:
        client.close()
        if holder is not None:
            holder.close()
        for proc in pipeline.procs:
            proc.stop()
        broker.stop()
