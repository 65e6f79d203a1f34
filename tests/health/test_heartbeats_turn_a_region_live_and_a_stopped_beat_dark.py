"""From heartbeat to what the dashboard shows: sealed heartbeats kept by the central handler
(probes.fleet.heartbeats, real keys and signatures) turn a region live on the map's reader and in
/api/workers, silence turns it stale then dark as time passes, and a stopped beat turns it dark at once."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from probes import readings
from probes.fleet import heartbeats
from probes.worker.protocol import HEARTBEAT, SCHEMA, seal
from tests.factories import RegionFactory, region_credential

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def beat(region, credential, instance: str, *, state: str, at: datetime, offset_ms: float | None = 12.5) -> None:
    content = {
        "instance": instance,
        "name": f"region-{region.slug}-1@vm",
        "hostname": "vm-lagos-1",
        "release": "0.2.0",
        "schema": SCHEMA,
        "engine": "python 3.11.7 httpx 0.28.1",
        "state": state,
        "started_at": (NOW - timedelta(minutes=10)).isoformat(),
        "sent_at": at.isoformat(),
        "seq": int(at.timestamp()),
        "in_flight": 2,
        "runs": 40,
        "last_run_at": at.isoformat(),
        "queue_depth": 1,
        "clock_offset_ms": offset_ms,
        "round_trip_ms": 3.0,
        "reply_to": None,
    }
    outcome = heartbeats.handle(seal(HEARTBEAT, region.slug, credential, content), now=at)
    assert outcome.ok, outcome.reason


def test_a_region_is_live_while_it_beats_then_stale_then_dark(settings):
    settings.LATENCY_REGION_STALE_AFTER, settings.LATENCY_REGION_DARK_AFTER = 60, 300
    region = RegionFactory(slug="hb-lagos")
    credential = region_credential(region)
    instance = uuid.uuid4().hex
    assert readings.region_status(NOW)[region.id] == "dark"
    beat(region, credential, instance, state="running", at=NOW)
    beat(region, credential, instance, state="running", at=NOW + timedelta(seconds=5))
    later = NOW + timedelta(seconds=5)
    assert [readings.region_status(later + timedelta(seconds=s))[region.id] for s in (0, 90, 400)] == [
        "live",
        "stale",
        "dark",
    ]
    [row] = readings.worker_rows([region.id], later)
    assert (row.hostname, row.release, row.status, row.in_flight, row.clock_offset_ms) == (
        "vm-lagos-1",
        "0.2.0",
        "live",
        2,
        12.5,
    )
    assert row.key_id == credential.key_id


def test_a_stopped_beat_turns_the_region_dark_at_once():
    region = RegionFactory(slug="hb-lima")
    credential = region_credential(region)
    instance = uuid.uuid4().hex
    beat(region, credential, instance, state="running", at=NOW)
    beat(region, credential, instance, state="stopped", at=NOW + timedelta(seconds=1))
    assert readings.region_status(NOW + timedelta(seconds=1))[region.id] == "dark"
    [row] = readings.worker_rows([region.id], NOW + timedelta(seconds=1))
    assert row.status == "stopped"


def test_the_workers_api_shows_what_the_heartbeat_said(client, settings, fleet_viewer):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    region = RegionFactory(slug="hb-oslo")
    now = datetime.now(UTC)
    beat(region, region_credential(region), uuid.uuid4().hex, state="running", at=now, offset_ms=-1500.0)
    [worker] = client.get("/api/workers?region=hb-oslo").json()["workers"]
    assert (worker["region"], worker["hostname"], worker["status"], worker["clock_offset_ms"]) == (
        "hb-oslo",
        "vm-lagos-1",
        "live",
        -1500.0,
    )
    assert worker["clock_flagged"] is True and worker["region_status"] == "live"
