"""The same on RabbitMQ as on Redis (tests/pipeline/test_the_ingest_worker_survives_a_broker_restart.py): the
broker's connections dropped in the middle of a stream of runs, with a heartbeat in flight in the ingest worker,
and the broker back; the ingest worker reconnects, still the same process, rows keep arriving, and every slot ends
as exactly one row. (The machine's RabbitMQ serves other vhosts, so it is cut off behind a proxy, not killed.)"""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from probes.models import Measurement
from probes.worker.protocol import region_queue
from tests.pipeline.broker_outage import a_heartbeat_in_flight, assert_one_row_per_slot, logged_since, three_probes
from tests.support import TcpProxy, wait_for

pytestmark = pytest.mark.timeout(420)


def test_the_ingest_worker_reconnects_after_a_rabbitmq_drop_and_every_slot_has_one_row(
    pipeline, rabbitmq, llm_probe, make_probe
):
    probes = three_probes(llm_probe, make_probe, "test-bogota")
    region = probes[0].regions.get()
    proxy = TcpProxy(rabbitmq.host, rabbitmq.port)
    try:
        url = replace(rabbitmq, port=proxy.port).central_url
        ingest = pipeline.start_ingest(CELERY_BROKER_URL=url)
        wait_for(lambda: " ready." in ingest.log(), 60, message="the ingest worker to be ready")
        worker = pipeline.start_region(region.slug, LATENCY_BROKER_URL=url, LATENCY_HEARTBEAT_SECONDS="1")
        scheduler = pipeline.start_scheduler(CELERY_BROKER_URL=url)
        wait_for(lambda: Measurement.objects.count() >= 4, 120, message="rows before the outage")
        ingest_pid = ingest.pid
        marks = {proc: len(proc.log_path.read_bytes()) for proc in (ingest, worker)}

        with a_heartbeat_in_flight(pipeline.database_url) as holder:
            dropped_at = datetime.now(UTC)
            proxy.down()
            for proc in (ingest, worker):
                wait_for(
                    lambda proc=proc: logged_since(proc, marks[proc], "Connection to broker lost"),
                    60,
                    message=f"{proc.args[0]} to notice",
                )
            holder.rollback()  # the heartbeat goes on, and finds no broker to answer through
        proxy.up()
        back_at = datetime.now(UTC)

        wait_for(
            lambda: all(Measurement.objects.filter(probe=p, scheduled_for__gt=back_at).count() >= 2 for p in probes),
            150,
            message="rows after the broker came back",
        )
        assert ingest.popen.poll() is None and ingest.pid == ingest_pid, ingest.log()
        assert b"does not implement kill_job" not in ingest.log_path.read_bytes()

        scheduler.stop()

        def drained() -> bool:
            lengths = rabbitmq.queue_lengths()  # ready and unacknowledged messages alike
            return lengths.get("ingest", 0) == 0 and lengths.get(region_queue(region.slug), 0) == 0

        wait_for(drained, 120, message="the broker to drain")
        assert ingest.popen.poll() is None, ingest.log()
        assert_one_row_per_slot(probes, dropped_at, back_at)
    finally:
        for proc in pipeline.procs:
            proc.stop()
        proxy.close()
