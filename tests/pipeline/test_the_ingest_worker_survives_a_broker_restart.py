"""The broker killed in the middle of a stream of runs and started again (the same Redis, on the same port, from
its append-only file): the ingest worker reconnects as the region worker and the scheduler do, and is still the
same process; rows keep arriving, and every slot ends as exactly one row: a measurement, or a missed run for a
slot that fell in the outage (never an error, never two measurements).

It used to exit: at the connection loss Celery cancelled the tasks in flight, and the thread pool cannot cancel
one ("does not implement kill_job"): an unrecoverable error, and the ingest stopped for good. A task is in
flight here for sure: the test holds a lock on the region workers' rows, so a heartbeat waits on it in the
ingest worker (as one does on a busy database) when the broker goes."""

from datetime import UTC, datetime

import pytest
import redis

from devtools.embedded import EmbeddedRedis
from probes.models import Measurement
from probes.worker.protocol import region_queue
from tests.pipeline.broker_outage import a_heartbeat_in_flight, assert_one_row_per_slot, logged_since, three_probes
from tests.support import wait_for

pytestmark = pytest.mark.timeout(420)


def test_the_ingest_worker_reconnects_after_a_broker_restart_and_every_slot_has_one_row(
    pipeline, llm_probe, make_probe, tmp_path
):
    probes = three_probes(llm_probe, make_probe, "test-quito")
    region = probes[0].regions.get()
    broker = EmbeddedRedis(tmp_path / "broker")
    url = broker.start()
    client = redis.Redis.from_url(url)
    try:
        ingest = pipeline.start_ingest(REDIS_URL=url)
        worker = pipeline.start_region(region.slug, REDIS_URL=url, LATENCY_HEARTBEAT_SECONDS="1")
        scheduler = pipeline.start_scheduler(REDIS_URL=url)
        wait_for(lambda: Measurement.objects.count() >= 4, 120, message="rows before the outage")
        ingest_pid = ingest.pid
        marks = {proc: len(proc.log_path.read_bytes()) for proc in (ingest, worker, scheduler)}

        with a_heartbeat_in_flight(pipeline.database_url) as holder:
            killed_at = datetime.now(UTC)
            broker.kill()
            for proc, sign in ((ingest, "Connection to broker lost"), (worker, "Connection to broker lost")):
                wait_for(
                    lambda proc=proc, sign=sign: logged_since(proc, marks[proc], sign),
                    60,
                    message=f"{proc.args[0]} to notice",
                )
            wait_for(
                lambda: logged_since(scheduler, marks[scheduler], "redis unavailable"),
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
        assert_one_row_per_slot(probes, killed_at, back_at)
    finally:
        client.close()
        for proc in pipeline.procs:
            proc.stop()
        broker.stop()
