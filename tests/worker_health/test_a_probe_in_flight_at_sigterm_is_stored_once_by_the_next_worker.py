"""A region worker stopped (SIGTERM) in the middle of a run exits with status 0 within its stop timeout, and the run
is not lost: the probe still streaming is cancelled and its run handed back to the broker, the next worker runs it,
and its slot is stored exactly once (as is every other slot)."""

from __future__ import annotations

import base64
import json
from collections import Counter
from datetime import datetime

import pytest

from probes.models import Measurement
from probes.worker.protocol import region_queue
from tests.support import streaming_since, wait_for
from tests.worker_health.support import sigterm_to_exit, stop_seconds

pytestmark = pytest.mark.timeout(300)

REGION = "test-health-quito"


def held_slots(redis, queue: str) -> list[datetime]:
    """The slots of the runs a worker holds unacknowledged (kombu's `unacked` hash on Redis)."""
    slots = []
    for raw in redis.hvals("unacked"):
        message, _exchange, routing_key = json.loads(raw)
        if routing_key == queue:
            (order,), _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
            slots.append(datetime.fromisoformat(json.loads(order["body"])["scheduled_for"]))
    return slots


def test_a_run_in_flight_at_sigterm_is_handed_back_and_stored_once(pipeline, llm_probe, mockllm):
    # Each call streams for about 12 s (60 tokens, 200 ms apart): still streaming when the stop's grace runs out.
    # One slot every 30 s.
    probe = llm_probe(slug=REGION, interval=30, timeout=25, tokens=60, gap_ms=200)
    region = probe.regions.get()
    queue = region_queue(REGION)
    pipeline.start_ingest()
    doomed = pipeline.start_region(REGION)
    known = set(mockllm._log)  # the session's server: requests of earlier tests are in its log too
    pipeline.start_scheduler()

    streaming = streaming_since(mockllm, known)

    wait_for(lambda: held_slots(pipeline.redis, queue), 90, message="a run to be taken")
    wait_for(streaming, 30, message="the call to be streaming")
    # Usually the run in flight alone; on a slow machine the next slot's order can be held too (prefetched).
    held = held_slots(pipeline.redis, queue)
    assert held

    took = sigterm_to_exit(doomed, stop_seconds("worker"))
    print(f"worker with a probe in flight: SIGTERM to exit {took:.2f} s")
    assert "handed back to the broker" in doomed.log(), doomed.log()
    cut = [slot for slot in held if not Measurement.objects.filter(region=region, scheduled_for=slot).exists()]
    assert cut, "every run held at SIGTERM was stored before the worker exited: none was in flight"

    pipeline.start_region(REGION)
    wait_for(
        lambda: all(Measurement.objects.filter(region=region, scheduled_for=slot).exists() for slot in held),
        90,
        message="the handed-back runs, run by the next worker",
    )
    wait_for(lambda: pipeline.redis.hlen("unacked") == 0, 60, message="every run acknowledged")
    slots = Counter(Measurement.objects.filter(region=region).values_list("scheduled_for", flat=True))
    assert [slots[slot] for slot in held] == [1] * len(held)
    assert [s for s, n in slots.items() if n > 1] == []
