"""A region worker killed (SIGKILL) in the middle of a run loses nothing and doubles nothing: the broker
gives the run to another worker after the visibility timeout, the killed run's slot is stored once, and
no slot has two rows."""

import base64
import json
from collections import Counter
from datetime import datetime

import pytest

from probes.models import Measurement
from probes.worker.protocol import region_queue
from tests.support import streaming_since, wait_for

pytestmark = pytest.mark.timeout(300)


def _unacked_slots(client, queue: str) -> list[datetime]:
    """The slots of the runs a worker holds unacknowledged (kombu's `unacked` hash on Redis: each entry
    is [message, exchange, routing key], the message body base64 JSON [args, kwargs, embed], the one
    argument the signed order)."""
    slots = []
    for raw in client.hvals("unacked"):
        message, _exchange, routing_key = json.loads(raw)
        if routing_key != queue:
            continue
        (order,), _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        slots.append(datetime.fromisoformat(json.loads(order["body"])["scheduled_for"]))  # the signed content
    return slots


def test_a_worker_killed_mid_run_leaves_exactly_one_row_per_slot(tls_fleet, llm_probe, credential, mockllm):
    # Each call streams for about 3 s (30 tokens, 100 ms apart): long enough to be killed in the middle.
    probe = llm_probe(slug="test-lima", interval=10, timeout=8, tokens=30, gap_ms=100)
    region = probe.regions.get()
    text = credential(region)
    client = tls_fleet.broker.client()
    tls_fleet.start_ingest()
    doomed = tls_fleet.start_worker(region.slug, text)
    known = set(mockllm._log)  # the session's server: requests of earlier tests are in its log too
    tls_fleet.start_scheduler()

    streaming = streaming_since(mockllm, known)

    # A run taken (unacknowledged) and its call in the middle of its stream.
    wait_for(lambda: _unacked_slots(client, region_queue(region.slug)), 90, message="a run to be taken")
    wait_for(streaming, 30, message="the call to be streaming")
    # Read at the kill, not before: a slot the scheduler published late at its start is skipped as stale
    # (and acknowledged) in the meantime, and the next slot may already be held, sent ahead of its moment.
    held = wait_for(lambda: _unacked_slots(client, region_queue(region.slug)), 30, message="the run in hand")
    killed_slot = min(held)  # the one streaming: a slot held for later is later
    doomed.kill()
    assert not Measurement.objects.filter(region=region, scheduled_for__in=held).exists()

    tls_fleet.start_worker(region.slug, text)
    wait_for(
        lambda: Measurement.objects.filter(region=region, scheduled_for=killed_slot).exists(),
        90,
        message="the killed run's slot, run again",
    )
    # Two later slots too, to see the schedule go on after the redelivery.
    wait_for(
        lambda: Measurement.objects.filter(region=region, scheduled_for__gt=killed_slot).count() >= 2,
        90,
        message="later slots",
    )
    wait_for(lambda: client.hlen("unacked") == 0, 60, message="every run acknowledged")
    slots = Counter(Measurement.objects.filter(region=region).values_list("scheduled_for", flat=True))
    assert [slots[slot] for slot in held] == [1] * len(held)
    assert [slot for slot, n in slots.items() if n > 1] == []
    client.close()
