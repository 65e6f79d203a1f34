"""SIGTERM ends a worker within its stop timeout even when what it is doing would take longer: the scheduler whose
tick waits on a locked table, and the ingest worker whose maintenance task does. Both exit with status 0, and the
ingest worker's task is not lost: its message is back on its queue, and the next ingest worker runs it."""

from __future__ import annotations

import json
import re

import psycopg
import pytest

from tests.support import wait_for
from tests.worker_health.support import health_env, sigterm_to_exit, stop_seconds, wait_until_ready

pytestmark = pytest.mark.timeout(300)


def waiting_on_a_lock(conn, table: str) -> bool:
    return bool(
        conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s", [f"%{table}%"]
        ).fetchone()[0]
    )


def test_a_scheduler_stuck_in_its_tick_exits_0_within_its_stop_timeout(pipeline, llm_probe):
    from probes.models import Probe

    llm_probe(slug="test-health-accra", interval=10)
    port, env = health_env()
    scheduler = pipeline.start_scheduler(**env)
    wait_until_ready(scheduler, port)
    table = Probe.regions.through._meta.db_table
    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as watcher:
        holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        wait_for(lambda: waiting_on_a_lock(watcher, table), 60, message="the tick to wait on the lock")
        took = sigterm_to_exit(scheduler, stop_seconds("scheduler"))
        print(f"scheduler stuck in its tick: SIGTERM to exit {took:.2f} s")
        holder.rollback()


def test_an_ingest_worker_stuck_in_a_task_exits_0_in_time_and_the_task_runs_again(pipeline):
    from probes.fleet.maintenance import central_token
    from probes.models import Probe

    task = "probes.close_slots"
    ingest = pipeline.start_ingest()
    wait_for(lambda: " ready." in ingest.log(), 60, message="the ingest worker to be ready")
    table = Probe._meta.db_table
    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as watcher:
        # close_slots reads the probes first (probes.fleet.missed): it waits here for as long as the lock is held.
        holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        pipeline.app.send_task(task, kwargs={"token": central_token(task)}, queue="maintenance")
        wait_for(lambda: waiting_on_a_lock(watcher, table), 60, message=f"{task} to wait on the lock")
        took = sigterm_to_exit(ingest, stop_seconds("ingest"))
        print(f"ingest worker stuck in a task: SIGTERM to exit {took:.2f} s")
        holder.rollback()

    # Handed back at the exit, not left for the visibility timeout: no worker is left to restore it.
    queued = [json.loads(raw)["headers"]["task"] for raw in pipeline.redis.lrange("maintenance", 0, -1)]
    assert queued == [task], ingest.log()
    again = pipeline.start_ingest()
    ran = re.compile(rf"Task {re.escape(task)}\[[^\]]+\] succeeded")
    wait_for(lambda: ran.search(again.log()), 60, message=f"{task} to run again")
