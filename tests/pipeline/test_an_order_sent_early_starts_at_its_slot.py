"""The scheduler publishes a slot a little before it begins, so that reading the probes and delivering
the order do not delay the start; the worker holds the order until the slot's moment."""

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Measurement
from probes.scheduling import current_slot, dispatch_due, region_queue, slot_offset
from tests.support import queued_messages, wait_for

pytestmark = pytest.mark.timeout(120)


def test_the_scheduler_publishes_the_next_slot_within_its_lead(pipeline, llm_probe):
    probe = llm_probe(slug="test-accra", interval=60)
    offset = slot_offset(probe.id, 60)
    start = current_slot(datetime.now(UTC).timestamp(), 60, offset)
    # Half a second before the next slot: the current one and the next one are both due.
    now = datetime.fromtimestamp(start + 60 - 0.5, tz=UTC)
    assert dispatch_due(pipeline.app, pipeline.redis, now, lead_s=1.0) == 2
    assert dispatch_due(pipeline.app, pipeline.redis, now, lead_s=1.0) == 0
    slots = sorted(m["scheduled_for"] for m in queued_messages(pipeline.redis, region_queue("test-accra")))
    assert slots == [datetime.fromtimestamp(t, tz=UTC).isoformat() for t in (start, start + 60)]


def test_a_worker_holds_an_early_order_until_its_slot(pipeline, llm_probe):
    probe = llm_probe(slug="test-kumasi", interval=60)
    pipeline.start_ingest()
    worker = pipeline.start_region("test-kumasi")
    wait_for(lambda: "connected" in worker.log(), 120, message="the worker to start")
    from probes.scheduling import Slot, publish

    region = probe.regions.get()
    # Three seconds ahead: well beyond any delivery time, within what a worker holds.
    when = (datetime.now(UTC) + timedelta(seconds=3)).replace(microsecond=0)
    slot = Slot(probe.id, probe.target_id, region.id, region.slug, when, 60, probe.spec().to_dict())
    publish(pipeline.app, slot)
    wait_for(lambda: Measurement.objects.filter(scheduled_for=when).exists(), 60, message="the row")
    row = Measurement.objects.get(scheduled_for=when)
    assert row.started_at >= when
