"""One row per scheduled run, however many schedulers or deliveries."""

from datetime import UTC, datetime

import pytest

from probes.models import Measurement
from probes.scheduling import Slot, dispatch_due, publish, region_queue
from tests.support import wait_for

pytestmark = pytest.mark.timeout(120)


def _slot(probe, region, when):
    return Slot(probe.id, probe.target_id, region.id, region.slug, when, probe.interval_seconds, probe.spec().to_dict())


def test_two_schedulers_publish_a_slot_once(pipeline, llm_probe):
    llm_probe(slug="test-dubai", interval=60)
    now = datetime.now(UTC)
    first = dispatch_due(pipeline.app, pipeline.redis, now)
    second = dispatch_due(pipeline.app, pipeline.redis, now)  # another scheduler, or a restarted one
    assert (first, second) == (1, 0)
    assert pipeline.queue_length(region_queue("test-dubai")) == 1


def test_duplicate_deliveries_of_a_slot_are_stored_once(pipeline, llm_probe):
    probe = llm_probe(slug="test-mumbai", interval=60)
    region = probe.regions.get()
    when = datetime.now(UTC).replace(microsecond=0)
    for _ in range(3):
        publish(pipeline.app, _slot(probe, region, when))
    pipeline.start_ingest()
    pipeline.start_region("test-mumbai")
    wait_for(
        lambda: pipeline.queue_length(region_queue("test-mumbai")) == 0 and pipeline.queue_length("ingest") == 0,
        60,
        message="queues to drain",
    )
    wait_for(lambda: Measurement.objects.exists(), 30, message="the row")
    # Give the two extra deliveries' results time to reach the database too.
    wait_for(lambda: pipeline.redis.hlen("unacked") == 0, 30, message="all messages acknowledged")
    assert Measurement.objects.filter(probe=probe, region=region, scheduled_for=when).count() == 1


def test_missed_runs_are_not_fired_in_a_burst(pipeline, llm_probe):
    from datetime import timedelta

    # 30 s: the current slot must still be current when the workers are up, which on a busy
    # two-core machine took 11 s once.
    probe = llm_probe(slug="test-sydney", interval=30)
    region = probe.regions.get()
    now = datetime.now(UTC).replace(microsecond=0)
    # Runs queued while no worker listened: five stale slots and the current one.
    for k in range(5, 0, -1):
        publish(pipeline.app, _slot(probe, region, now - timedelta(seconds=30 * k + 5)))
    publish(pipeline.app, _slot(probe, region, now))
    # One whose expiry has passed entirely.
    publish(pipeline.app, _slot(probe, region, now - timedelta(hours=1)), expires=now - timedelta(minutes=1))
    pipeline.start_ingest()
    pipeline.start_region("test-sydney")
    wait_for(lambda: Measurement.objects.exists(), 60, message="the current run")
    wait_for(
        lambda: pipeline.queue_length(region_queue("test-sydney")) == 0 and pipeline.redis.hlen("unacked") == 0,
        30,
        message="the queue to drain",
    )
    assert list(Measurement.objects.values_list("scheduled_for", flat=True)) == [now]
