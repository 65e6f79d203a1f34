"""An ingest worker stopped (SIGTERM) while a batch of measurements waits to be written exits with status 0 within
its stop timeout, and no measurement is lost or doubled: the batch's messages, never acknowledged, are back on the
ingest queue, and the next ingest worker stores them, every slot once."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import psycopg
import pytest

from probes.models import Measurement
from tests.support import wait_for
from tests.worker_health.support import sigterm_to_exit, stop_seconds

pytestmark = pytest.mark.timeout(300)

REGION = "test-health-dakar"


def ingest_waiting_on_a_lock(conn) -> bool:
    return bool(
        conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s",
            [f"%{Measurement._meta.db_table}%"],
        ).fetchone()[0]
    )


def test_an_ingest_worker_stopped_while_its_batch_waits_loses_and_doubles_nothing(pipeline, llm_probe):
    probe = llm_probe(slug=REGION, interval=10)
    region = probe.regions.get()
    stored = Measurement.objects.filter(region=region)
    doomed = pipeline.start_ingest()
    pipeline.start_region(REGION)
    pipeline.start_scheduler()
    wait_for(stored.exists, 90, message="a first measurement stored")

    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as watcher:
        # Reads go on; the ingest worker's insert waits, its batch in hand and not acknowledged.
        holder.execute(f"LOCK TABLE {Measurement._meta.db_table} IN EXCLUSIVE MODE")
        wait_for(lambda: ingest_waiting_on_a_lock(watcher), 60, message="the next batch to wait on the lock")
        took = sigterm_to_exit(doomed, stop_seconds("ingest"))
        print(f"ingest worker with a batch in hand: SIGTERM to exit {took:.2f} s")
        holder.rollback()
    assert pipeline.queue_length("ingest") > 0

    pipeline.start_ingest()
    last = stored.order_by("-scheduled_for").values_list("scheduled_for", flat=True).first()

    def every_slot_through_two_more():
        slots = sorted(set(stored.values_list("scheduled_for", flat=True)))
        every = [slots[0] + timedelta(seconds=10 * i) for i in range(len(slots))]
        return slots == every and slots[-1] >= last + timedelta(seconds=20)

    # The batch handed back may be stored after later ones: the queue is not read in the order it was written.
    wait_for(every_slot_through_two_more, 90, message="every slot stored, through two more than before the stop")
    slots = Counter(stored.values_list("scheduled_for", flat=True))
    assert [slot for slot, n in slots.items() if n > 1] == []
