"""GET /api/workers: every region worker heard lately with its region, host, release, last heartbeat,
status, runs in flight and clock offset, to users with probes.view_worker; ?region= narrows it (a form, as
every endpoint reads its parameters); the same reading rule as the other endpoints."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from probes.models import Worker
from tests.factories import RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db

REQUIRED = {"region", "hostname", "release", "last_seen", "status", "in_flight", "clock_offset_ms"}


@pytest.fixture
def fleet():
    lagos = RegionFactory(slug="api-lagos", name="Lagos")
    lima = RegionFactory(slug="api-lima", name="Lima")
    now = timezone.now()
    WorkerFactory(region=lagos, hostname="lagos-1", release="0.2.0", in_flight=3, queue_depth=7, clock_offset_ms=1250.5)
    WorkerFactory(region=lagos, hostname="lagos-2", state=Worker.STOPPED, last_seen=now - timedelta(minutes=2))
    WorkerFactory(region=lima, hostname="lima-1", last_seen=now - timedelta(minutes=2), clock_offset_ms=None)
    return lagos, lima


def test_each_worker_carries_the_issues_fields(client, fleet_viewer, fleet):
    body = client.get("/api/workers").json()
    assert all(set(worker) >= REQUIRED for worker in body["workers"])
    by_host = {w["hostname"]: w for w in body["workers"]}
    assert set(by_host) == {"lagos-1", "lagos-2", "lima-1"}
    lagos = by_host["lagos-1"]
    assert (lagos["region"], lagos["release"], lagos["status"], lagos["in_flight"]) == ("api-lagos", "0.2.0", "live", 3)
    assert (lagos["clock_offset_ms"], lagos["clock_flagged"], lagos["queue_depth"]) == (1250.5, True, 7)
    assert (lagos["region_status"], by_host["lima-1"]["region_status"]) == ("live", "stale")
    assert by_host["lagos-2"]["status"] == "stopped"
    assert by_host["lima-1"]["clock_offset_ms"] is None
    assert datetime.fromisoformat(lagos["last_seen"]).tzinfo is not None
    assert body["regions"]["api-lagos"] == "live"


def test_the_region_parameter_names_the_regions_shown(client, fleet_viewer, fleet):
    body = client.get("/api/workers?region=api-lima").json()
    assert [w["hostname"] for w in body["workers"]] == ["lima-1"]
    assert body["regions"] == {"api-lima": "stale"}


def test_an_unknown_region_is_a_400_naming_the_parameter(client, viewer, fleet):
    response = client.get("/api/workers?region=nowhere")
    assert response.status_code == 400
    assert response.json()["param"] == "region"
    assert "nowhere" in response.json()["error"]


def test_no_credential_or_key_material_is_shown(client, viewer, fleet):
    text = client.get("/api/workers").content.decode()
    assert "la1_" not in text and "public_key" not in text


def test_anonymous_visitors_are_refused_unless_the_dashboard_is_public(client, settings, fleet):
    settings.LATENCY_PUBLIC_DASHBOARD = False
    response = client.get("/api/workers")
    assert (response.status_code, response.json()) == (403, {"error": "login required"})
    settings.LATENCY_PUBLIC_DASHBOARD = True
    assert client.get("/api/workers").status_code == 200


def test_only_reading_is_allowed(client, viewer, fleet):
    assert client.post("/api/workers").status_code == 405
