"""Rotating the central key stops no worker: through the overlap every order
carries a signature by the old key and by the new one, so a worker whose
credential was issued before the rotation (it holds only the old key) runs
them, and one issued during it holds both; once the old key's overlap has
ended, orders are signed by the new key alone and the new credential's
worker runs them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from probes.fleet import central
from probes.models import CentralKey
from probes.worker.protocol import Credential, region_queue
from tests.support import queued_messages, wait_for

pytestmark = pytest.mark.timeout(300)


def test_orders_run_through_the_overlap_and_after_it_with_a_new_credential(orders, pipeline):
    before = orders.start()  # its credential holds the central key of now
    (old,) = CentralKey.objects.all()
    new = central.rotate(timedelta(hours=1))

    during = orders.slot("during-the-overlap")
    orders.publish(during)
    wait_for(lambda: orders.measured(during), 90, message="the old credential's worker to run an order")

    before.stop()
    credential = pipeline.region_key(orders.region.slug)
    assert set(Credential.parse(credential).central_keys()) == {old.key_id, new.key_id}
    after = pipeline.start_region(
        orders.region.slug, hello_timeout=60, LATENCY_HEARTBEAT_SECONDS="1", LATENCY_REGION_KEY=credential
    )
    wait_for(lambda: " ready." in after.log(), 90, message="the new credential's worker to be ready")

    CentralKey.objects.filter(pk=old.pk).update(retires_at=datetime.now(UTC))  # the overlap is over
    central.forget()
    later = orders.slot("after-the-overlap", when=during.scheduled_for + timedelta(seconds=1))
    orders.publish(later)
    wait_for(lambda: orders.measured(later), 90, message="the new credential's worker to run an order")
    assert after.popen.poll() is None


def test_during_the_overlap_an_order_carries_a_signature_by_each_key(orders, pipeline):
    pipeline.region_key(orders.region.slug)
    central.rotate(timedelta(hours=1))
    orders.publish(orders.slot("two-signatures"))
    raw = pipeline.redis.lrange(region_queue(orders.region.slug), 0, -1)
    assert len(raw) == 1 and len(queued_messages(pipeline.redis, region_queue(orders.region.slug))) == 1
    in_force = set(CentralKey.objects.values_list("key_id", flat=True))
    envelope = json.loads(raw[0])
    import base64

    (order,), _kwargs, _embed = json.loads(base64.b64decode(envelope["body"]))
    assert set(order["signatures"]) == in_force and len(in_force) == 2
