"""Through the real broker and a real ingest worker: a sealed results
message is stored; the same payloads signed with another region's key,
claiming this region, become one dead letter and no row."""

from __future__ import annotations

from datetime import datetime

import pytest

from probes.models import DeadLetter, Measurement
from probes.tasks import INGEST_TASK
from tests.factories import RegionFactory, region_credential, sealed_results
from tests.support import wait_for

pytestmark = pytest.mark.timeout(180)


def test_a_sealed_message_is_stored_and_one_signed_by_another_region_is_a_dead_letter(
    pipeline, probe, region, payloads
):
    mumbai = RegionFactory(slug="test-mumbai")
    forged = sealed_results(region, payloads(3, start=10), region_credential(mumbai), slug=region.slug)
    honest = sealed_results(region, payloads(3))
    ingest = pipeline.start_ingest()
    wait_for(lambda: "ready." in ingest.log(), 60, message="the ingest worker to be ready")

    pipeline.app.send_task(INGEST_TASK, args=[forged], queue="ingest")
    pipeline.app.send_task(INGEST_TASK, args=[honest], queue="ingest")

    wait_for(lambda: Measurement.objects.count() >= 3 and DeadLetter.objects.exists(), 60, message="both handled")
    wait_for(lambda: pipeline.redis.llen("ingest") == 0 and pipeline.redis.hlen("unacked") == 0, 30, message="acks")
    assert sorted(Measurement.objects.values_list("scheduled_for", flat=True)) == [
        datetime.fromisoformat(p["scheduled_for"]) for p in payloads(3)
    ]
    assert set(Measurement.objects.values_list("region_id", flat=True)) == {region.id}
    letter = DeadLetter.objects.get()
    assert letter.payload == forged and letter.source == "ingest" and letter.region_id == region.id
    assert "belongs to region test-mumbai" in letter.reason
    log = ingest.log()
    assert "belongs to region test-mumbai" in log and "Traceback" not in log
