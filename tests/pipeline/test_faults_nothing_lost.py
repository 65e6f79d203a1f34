"""Workers killed, Postgres gone, the broker gone: every scheduled run ends
as exactly one row."""

from datetime import UTC, datetime

import pytest

from probes.models import Measurement
from probes.scheduling import Slot, publish, region_queue
from tests.conftest import _database_url
from tests.support import TcpProxy, wait_for

pytestmark = pytest.mark.timeout(180)


def _slot(probe, region, when):
    return Slot(probe.id, probe.target_id, region.id, region.slug, when, probe.interval_seconds, probe.spec().to_dict())


def test_worker_killed_mid_probe_has_the_run_delivered_again_and_recorded_once(pipeline, llm_probe, mockllm):
    # The first token takes 3 s: long enough to kill the worker mid-call.
    probe = llm_probe(slug="test-nairobi", interval=60, timeout=10, ttft_ms=3000)
    region = probe.regions.get()
    when = datetime.now(UTC).replace(microsecond=0)
    publish(pipeline.app, _slot(probe, region, when))
    pipeline.start_ingest()
    doomed = pipeline.start_region("test-nairobi")
    known = set(mockllm._log)  # the session's server: requests of earlier tests are in its log too
    wait_for(
        lambda: pipeline.redis.hlen("unacked") >= 1 and pipeline.queue_length(region_queue("test-nairobi")) == 0,
        30,
        message="the run to be taken",
    )

    def in_flight():
        return any(rid not in known and rec["first_token_ns"] is None for rid, rec in list(mockllm._log.items()))

    # The call reached the server and waits for its first token (3 s away).
    wait_for(in_flight, 30, message="the call to be in flight")
    doomed.kill()
    assert not Measurement.objects.exists()
    pipeline.start_region("test-nairobi")  # a fresh worker; Redis redelivers after the visibility timeout
    row = wait_for(lambda: Measurement.objects.first(), 60, message="the redelivered run")
    wait_for(lambda: pipeline.redis.hlen("unacked") == 0, 30, message="all acknowledged")
    assert row.outcome == "ok" and row.scheduled_for == when
    assert Measurement.objects.count() == 1


def test_measurements_wait_in_the_broker_while_postgres_is_down(pipeline, llm_probe):
    probe = llm_probe(slug="test-joburg", interval=60)
    region = probe.regions.get()
    db = pipeline.db_settings
    proxy = TcpProxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432))
    try:
        ingest = pipeline.start_ingest(DATABASE_URL=_database_url(db, host="127.0.0.1", port=proxy.port))
        pipeline.start_region("test-joburg")
        proxy.down()
        base = datetime.now(UTC).replace(microsecond=0)
        from datetime import timedelta

        slots = [base - timedelta(seconds=k) for k in range(5)]
        for when in slots:
            publish(pipeline.app, _slot(probe, region, when))
        # The runs happen and wait, unacknowledged, while the database is away.
        wait_for(lambda: "database unavailable" in ingest.log(), 60, message="the ingest worker to notice the outage")
        # The ingest worker holds them unacknowledged; it cannot write meanwhile.
        wait_for(lambda: pipeline.redis.hlen("unacked") >= 1, 30, message="the measurements to be held")
        assert Measurement.objects.count() == 0
        proxy.up()
        wait_for(lambda: Measurement.objects.count() == 5, 60, message="all five rows after recovery")
        wait_for(lambda: pipeline.redis.hlen("unacked") == 0, 30, message="all acknowledged")
        assert sorted(Measurement.objects.values_list("scheduled_for", flat=True)) == sorted(slots)
    finally:
        proxy.close()


def test_workers_and_scheduler_reconnect_after_the_broker_comes_back(pipeline, llm_probe):
    from urllib.parse import urlsplit

    llm_probe(slug="test-london", interval=10)
    parts = urlsplit(pipeline.redis_url)
    proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 6379)
    try:
        via_proxy = f"redis://127.0.0.1:{proxy.port}{parts.path}"
        procs = [
            pipeline.start_ingest(REDIS_URL=via_proxy),
            pipeline.start_region("test-london", REDIS_URL=via_proxy),
            pipeline.start_scheduler(REDIS_URL=via_proxy),
        ]
        wait_for(lambda: Measurement.objects.count() >= 1, 60, message="a first measurement")
        marks = [len(proc.log_path.read_bytes()) for proc in procs]
        proxy.down()
        # Every process notices the broker is gone before it comes back.
        signs = ("Connection to broker lost", "Connection to broker lost", "redis unavailable")
        for proc, mark, sign in zip(procs, marks, signs):
            wait_for(
                lambda proc=proc, mark=mark, sign=sign: sign.encode() in proc.log_path.read_bytes()[mark:],
                60,
                message=f"{proc.args[0]} to notice the outage",
            )
        outage_end = datetime.now(UTC)
        proxy.up()
        # A later slot is scheduled, run and stored: all three reconnected.
        wait_for(
            lambda: Measurement.objects.filter(scheduled_for__gt=outage_end).exists(),
            90,
            message="a measurement after the outage",
        )
    finally:
        proxy.close()
