"""The central side keeps a worker's row compare-and-swap style: a beat
handled late never moves it back, a stopped worker stays stopped, another
region's credential cannot take over a row, and the answer goes only to the
worker's own reply queue under the verified region."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from probes.fleet import central
from probes.fleet.heartbeats import handle, reply_target
from probes.fleet.keys import issue_key
from probes.models import Worker, WorkerBeat
from probes.worker.protocol import HEARTBEAT, SCHEMA, Credential, release, reply_queue, seal

pytestmark = pytest.mark.django_db


def beat(region, credential: Credential, instance: str, *, seq: int, state: str = "running", runs: int = 0) -> dict:
    now = datetime.now(UTC).isoformat()
    return seal(
        HEARTBEAT,
        region.slug,
        credential,
        {
            "instance": instance,
            "name": f"region-{region.slug}-{instance[:6]}@test",
            "hostname": "test",
            "release": release(),
            "schema": SCHEMA,
            "engine": "python",
            "state": state,
            "started_at": now,
            "sent_at": now,
            "seq": seq,
            "in_flight": 1,
            "runs": runs,
            "last_run_at": None,
            "queue_depth": 0,
            "clock_offset_ms": 1.5,
            "round_trip_ms": 3.0,
            "reply_to": reply_queue(region.slug, instance),
        },
    )


def test_beats_out_of_order_and_after_the_stop_leave_the_latest_state(make_region):
    region = make_region(slug="test-cas-lagos")
    credential = Credential.parse(issue_key(region).credential)
    instance = uuid.uuid4().hex
    t = datetime.now(UTC)
    assert handle(beat(region, credential, instance, seq=2, runs=5), now=t).ok
    # Seq 1, handled after seq 2 (a redelivery): the row keeps seq 2's state and time.
    assert handle(beat(region, credential, instance, seq=1, runs=1), now=t - timedelta(seconds=5)).ok
    row = Worker.objects.get(instance=instance)
    assert row.runs == 5 and row.last_seen == t and row.clock_offset_ms == 1.5
    assert handle(beat(region, credential, instance, seq=3, state="stopped", runs=6), now=t + timedelta(seconds=5)).ok
    # A running beat handled after the stopped one does not bring the worker back.
    assert handle(beat(region, credential, instance, seq=2, runs=5), now=t + timedelta(seconds=6)).ok
    row.refresh_from_db()
    assert row.state == Worker.STOPPED and row.runs == 6
    assert WorkerBeat.objects.filter(worker=row).count() == 2  # seq 2 and the stop: the stale ones are not history


def test_another_regions_credential_cannot_take_over_a_worker_row(make_region):
    lagos, oslo = make_region(slug="test-cas-lagos"), make_region(slug="test-cas-oslo")
    lagos_key = Credential.parse(issue_key(lagos).credential)
    oslo_key = Credential.parse(issue_key(oslo).credential)
    instance = uuid.uuid4().hex
    t = datetime.now(UTC)
    assert handle(beat(lagos, lagos_key, instance, seq=1, runs=3), now=t).ok
    handle(beat(oslo, oslo_key, instance, seq=2, runs=99), now=t + timedelta(seconds=5))
    row = Worker.objects.get(instance=instance)
    assert row.region == lagos and row.runs == 3


def test_the_answer_goes_only_to_the_workers_own_queue_under_the_verified_region(make_region):
    region = make_region(slug="test-cas-lagos")
    credential = Credential.parse(issue_key(region).credential)
    instance = uuid.uuid4().hex
    mine = reply_queue(region.slug, instance)
    assert reply_target(mine, region.slug, instance) == mine
    assert reply_target(mine, "test-cas-oslo", instance) is None
    assert reply_target(mine, region.slug, uuid.uuid4().hex) is None
    assert reply_target("ingest", region.slug, instance) is None
    assert reply_target("probes.test-cas-lagos", region.slug, instance) is None
    message = beat(region, credential, instance, seq=1)
    outcome = handle(message)
    assert outcome.ok and outcome.reply_to == mine
    assert outcome.region == {"id": region.id, "slug": region.slug, "name": region.name}


def test_a_refused_heartbeat_is_answered_when_its_queue_is_the_claimed_regions(make_region):
    region = make_region(slug="test-cas-lagos")
    _, stranger_text = Credential.new(central.public_keys())
    stranger = Credential.parse(stranger_text)
    instance = uuid.uuid4().hex
    outcome = handle(beat(region, stranger, instance, seq=4))
    assert not outcome.ok and "not a credential of this site" in outcome.reason
    assert outcome.reply_to == reply_queue(region.slug, instance) and outcome.seq == 4
    assert not Worker.objects.exists()
