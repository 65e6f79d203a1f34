"""The broker going away while a region worker is in the middle of a call does not stop the worker: Celery's
thread pool cannot cancel the run (cancelling it raised NotImplementedError and ended the worker for good), so
the run finishes, its slot is stored once, and the worker takes new runs after the reconnect."""

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest

from probes.models import Measurement
from probes.scheduling import Slot, publish
from tests.support import TcpProxy, wait_for

pytestmark = pytest.mark.timeout(180)


def _slot(probe, region, when):
    return Slot(probe.id, probe.target_id, region.id, region.slug, when, probe.interval_seconds, probe.spec().to_dict())


def test_a_run_in_flight_when_the_broker_drops_is_stored_once_and_the_worker_goes_on(pipeline, llm_probe, mockllm):
    # The first token takes 3 s: long enough to drop the broker mid-call.
    probe = llm_probe(slug="test-nairobi", interval=60, timeout=10, ttft_ms=3000)
    region = probe.regions.get()
    parts = urlsplit(pipeline.redis_url)
    proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 6379)
    try:
        via_proxy = f"redis://127.0.0.1:{proxy.port}{parts.path}"
        pipeline.start_ingest()
        worker = pipeline.start_region("test-nairobi", REDIS_URL=via_proxy)
        known = set(mockllm._log)  # the session's server: earlier tests' requests are in its log too
        first = datetime.now(UTC).replace(microsecond=0)
        publish(pipeline.app, _slot(probe, region, first))

        def in_flight():
            return any(rid not in known and rec["first_token_ns"] is None for rid, rec in list(mockllm._log.items()))

        wait_for(in_flight, 60, message="the call to be in flight")
        mark = len(worker.log_path.read_bytes())
        proxy.down()
        wait_for(
            lambda: b"Connection to broker lost" in worker.log_path.read_bytes()[mark:],
            60,
            message="the worker to notice the outage",
        )
        proxy.up()
        wait_for(lambda: Measurement.objects.filter(scheduled_for=first).exists(), 90, message="the run in flight")
        assert worker.popen.poll() is None, worker.log()
        # A later run is taken by the same worker after the reconnect.
        later = first + timedelta(seconds=1)
        publish(pipeline.app, _slot(probe, region, later))
        wait_for(lambda: Measurement.objects.filter(scheduled_for=later).exists(), 90, message="a run after it")
        assert worker.popen.poll() is None, worker.log()
        assert b"does not implement kill_job" not in worker.log_path.read_bytes()
        assert Measurement.objects.filter(scheduled_for=first).count() == 1
    finally:
        proxy.close()
