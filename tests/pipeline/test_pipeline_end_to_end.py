"""Schedule -> region queue -> engine -> ingest -> row -> broadcast, with the
real Redis broker, real Postgres and real worker processes."""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

from probes import live
from probes.models import Measurement
from tests.support import wait_for

pytestmark = pytest.mark.timeout(120)


async def _listen(group: str, ready: asyncio.Event, out: list, timeout: float):
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    ready.set()
    try:
        msg = await asyncio.wait_for(layer.receive(channel), timeout)
        out.append(msg)
    finally:
        await layer.group_discard(group, channel)


def test_scheduled_probe_is_measured_stored_and_broadcast(pipeline, llm_probe):
    probe = llm_probe(slug="test-lagos", interval=10)
    received: list = []

    async def scenario():
        ready = asyncio.Event()
        listener = asyncio.create_task(_listen(live.target_group(probe.target_id), ready, received, 60))
        await ready.wait()
        await asyncio.to_thread(pipeline.start_ingest)
        await asyncio.to_thread(pipeline.start_region, "test-lagos")
        await asyncio.to_thread(pipeline.start_scheduler)
        await listener

    async_to_sync(scenario)()
    assert received, pipeline.logs()
    items = received[0]["items"]
    # One item a run; on a busy machine the ingest may store two slots' runs in one batch, announced together.
    assert items
    for item in items:
        row = Measurement.objects.get(id=item["id"])
        assert row.probe_id == probe.id and row.region.slug == "test-lagos"
        assert row.outcome == "ok", row.error
        assert row.ttft_ms is not None and row.ttft_ms == item["ttft_ms"]
        assert row.worker.startswith("region-test-lagos-")  # then a piece of the process's instance id, @host
        assert row.started_at.tzinfo is not None
        # The run started at its slot or after it, and before its order expired: on a busy machine a run can
        # start a moment past its slot's end, as a busy region's can (probes.scheduling.order_expiry).
        late = (row.started_at - row.scheduled_for).total_seconds()
        assert 0 <= late < probe.interval_seconds + settings.LATENCY_VISIBILITY_TIMEOUT + 30, late


def test_every_active_region_gets_its_own_run(pipeline, llm_probe, make_region):
    probe = llm_probe(slug="test-tokyo", interval=10)
    probe.regions.add(make_region(slug="test-sydney", name="Sydney"))
    probe.regions.add(make_region(slug="test-idle", name="Idle", active=False))
    pipeline.start_ingest()
    pipeline.start_region("test-tokyo,test-sydney")
    pipeline.start_scheduler()
    slugs = wait_for(
        lambda: (
            (s := set(Measurement.objects.values_list("region__slug", flat=True))) >= {"test-tokyo", "test-sydney"}
            and s
        ),
        60,
        message="a measurement from each region",
    )
    assert "test-idle" not in slugs
    assert pipeline.queue_length("probes.test-idle") == 0


def test_failed_probe_is_stored_as_a_measurement_with_its_outcome(pipeline, llm_probe):
    llm_probe(slug="test-cairo", interval=10, fault=500)
    pipeline.start_ingest()
    pipeline.start_region("test-cairo")
    pipeline.start_scheduler()
    row = wait_for(lambda: Measurement.objects.first(), 60, message="a measurement")
    assert (row.outcome, row.http_status) == ("http_error", 500)
    assert row.error_type == "server_error"
    assert row.ttft_ms is None and row.ttfb_ms is not None
