"""A worker's reply queue has a name anyone on the broker can read, and an
`ok: false` answer stops the worker for good (status 78, not restarted). So
a worker believes only a reply the central site signed for its region, its
own process and a beat still waiting for an answer: an unsigned reply, one
signed with another key, and a real signed reply that is misaddressed or
replayed are refused and counted, and the worker goes on running probes.
The central site's own refusal (a retired credential) still stops it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from kombu import Connection

from probes.fleet.central import signers
from probes.fleet.keys import issue_key
from probes.worker.protocol import REPLY, SCHEMA, Credential, release, reply_queue, seal_central
from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)


def refusal(instance: str, seq: int) -> dict:
    now = datetime.now(UTC).isoformat()
    return {
        "ok": False,
        "reason": "forged: stop now",
        "seq": seq,
        "instance": instance,
        "received_at": now,
        "replied_at": now,
        "region": None,
    }


def test_forged_replies_are_refused_and_a_retired_credential_still_stops_the_worker(orders, pipeline):
    worker = orders.start()
    wait_for(lambda: orders.worker_row() is not None, 60, message="the worker's first beats")
    slug, instance = orders.region.slug, orders.worker_row().instance
    forger, _text = Credential.new()
    forged = [
        # Unsigned, as replies were before they were signed.
        {"schema": SCHEMA, "release": release(), **refusal(instance, 2)},
        # Signed, by a key of the forger's own.
        seal_central(REPLY, slug, [forger], refusal(instance, 2)),
        # Signed by the central site, for another worker of the region.
        seal_central(REPLY, slug, signers(), refusal(uuid.uuid4().hex, 2)),
        # Signed by the central site for this worker, answering the starting beat (seq 1) again: a replay.
        seal_central(REPLY, slug, signers(), refusal(instance, 1)),
    ]
    with Connection(pipeline.redis_url) as conn:
        producer = conn.Producer()
        for body in forged:
            producer.publish(body, exchange="", routing_key=reply_queue(slug, instance), serializer="json")

    wait_for(lambda: orders.worker_row().refused_replies == 4, 60, message="the four replies refused and counted")
    genuine = orders.slot("after-the-forged-replies")
    orders.publish(genuine)
    wait_for(lambda: orders.measured(genuine), 90, message="the worker to keep running probes")
    assert worker.popen.poll() is None
    assert "refuses this worker" not in worker.log()
    assert len(orders.refusal_lines("a heartbeat reply")) == 4  # four kinds, each said once

    issue_key(orders.region, overlap=timedelta(0))  # retires the worker's credential now
    wait_for(lambda: worker.popen.poll() is not None, 90, message="the worker to stop")
    assert worker.popen.returncode == 78, worker.log()
    (line,) = [line for line in worker.log().splitlines() if "refuses this worker" in line]
    assert "retired" in line
