"""The keys are in the database: while it is unreachable, the ingest worker
waits (messages unacknowledged in the broker) instead of failing the batch,
and once it is back the sealed results are verified and stored, once."""

from __future__ import annotations

import pytest

from probes.models import DeadLetter, Measurement
from probes.tasks import INGEST_TASK
from tests.conftest import _database_url
from tests.factories import sealed_results
from tests.support import TcpProxy, wait_for

pytestmark = pytest.mark.timeout(240)


def test_sealed_results_sent_while_postgres_is_down_are_stored_once_it_is_back(pipeline, region, payloads):
    message = sealed_results(region, payloads(4))
    db = pipeline.db_settings
    proxy = TcpProxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432))
    try:
        ingest = pipeline.start_ingest(DATABASE_URL=_database_url(db, host="127.0.0.1", port=proxy.port))
        wait_for(lambda: "ready." in ingest.log(), 60, message="the ingest worker to be ready")
        proxy.down()
        pipeline.app.send_task(INGEST_TASK, args=[message], queue="ingest")
        wait_for(lambda: "database unavailable" in ingest.log(), 60, message="the ingest worker to notice the outage")
        wait_for(lambda: pipeline.redis.hlen("unacked") >= 1, 30, message="the message to be held")
        assert Measurement.objects.count() == 0
        proxy.up()
        wait_for(lambda: Measurement.objects.count() == 4, 90, message="the four rows after recovery")
        wait_for(lambda: pipeline.redis.hlen("unacked") == 0, 30, message="the message acknowledged")
        assert not DeadLetter.objects.exists()
        assert "Traceback" not in ingest.log()
    finally:
        proxy.close()
