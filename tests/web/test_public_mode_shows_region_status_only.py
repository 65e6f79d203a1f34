"""A public dashboard shows each region's status (live, stale or dark) and when it was last heard, and nothing of
its workers: no host name, worker name, instance id, release, engine, clock or key id, neither on /api/workers nor
on the region's page. Signed-in users with probes.view_worker still see the workers; signed-in users without it
see what anonymous visitors see."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from tests.factories import RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db

WORKER = {
    "hostname": "vm-secret-host-17",
    "name": "celery@vm-secret-host-17",
    "instance": "5f0c2bd1e0a94c0fa7a6b1c2d3e4f5a6",
    "release": "7.7.7-rc3",
    "engine": "python 3.11 httpx 9.9.9-canary",
    "key_id": "a1b2c3d4e5f60718",
    "clock_offset_ms": -2413.0,
}


@pytest.fixture
def fleet(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    lagos = RegionFactory(slug="pub-lagos", name="Lagos")
    lima = RegionFactory(slug="pub-lima", name="Lima")
    WorkerFactory(region=lagos, **WORKER)
    WorkerFactory(region=lima, last_seen=timezone.now() - timedelta(minutes=2), hostname="vm-lima-host-3")
    return lagos, lima


def user(django_user_model, client, *, may_see_workers: bool):
    person = django_user_model.objects.create_user(username="person", password="a-long-test-password-6620")
    if may_see_workers:
        person.user_permissions.add(Permission.objects.get(codename="view_worker"))
    client.force_login(person)
    return person


def hidden(text: str) -> list[str]:
    """What of the workers the text shows."""
    shown = [value for value in (*WORKER.values(), "vm-lima-host-3") if str(value) in text]
    return shown + [word for word in ("-2413", "clock-flag", "worker-list") if word in text]


def test_anonymous_visitors_get_each_regions_status_and_last_heartbeat_only(client, fleet):
    response = client.get("/api/workers")
    assert response.status_code == 200
    assert hidden(response.content.decode()) == []
    body = response.json()
    assert body["workers"] == []
    assert (body["regions"]["pub-lagos"], body["regions"]["pub-lima"]) == ("live", "stale")
    # The regions the migrations seed, never heard, are dark with no heartbeat.
    assert set(body["last_seen"]) == set(body["regions"])
    assert {slug for slug, when in body["last_seen"].items() if when} == {"pub-lagos", "pub-lima"}
    assert datetime.fromisoformat(body["last_seen"]["pub-lima"]).tzinfo is not None
    assert client.get("/api/workers?region=pub-lima").json()["regions"] == {"pub-lima": "stale"}


def test_anonymous_visitors_see_the_region_pages_status_line_only(client, fleet):
    lagos, lima = fleet
    for region, status in ((lagos, "live"), (lima, "stale")):
        html = client.get(f"/regions/{region.slug}/").content.decode()
        assert f'data-status="{status}"' in html
        assert hidden(html) == []
    assert "Stale: the latest heartbeat came at" in client.get(f"/regions/{lima.slug}/").content.decode()


@pytest.mark.parametrize("public", [True, False])
def test_signed_in_users_without_the_permission_see_what_anonymous_visitors_see(
    client, django_user_model, settings, fleet, public
):
    settings.LATENCY_PUBLIC_DASHBOARD = public
    user(django_user_model, client, may_see_workers=False)
    assert client.get("/api/workers").json()["workers"] == []
    assert hidden(client.get("/api/workers").content.decode()) == []
    assert hidden(client.get(f"/regions/{fleet[0].slug}/").content.decode()) == []


@pytest.mark.parametrize("public", [True, False])
def test_signed_in_users_with_the_permission_still_see_the_workers(client, django_user_model, settings, fleet, public):
    settings.LATENCY_PUBLIC_DASHBOARD = public
    user(django_user_model, client, may_see_workers=True)
    body = client.get("/api/workers").json()
    by_host = {w["hostname"]: w for w in body["workers"]}
    assert set(by_host) == {"vm-secret-host-17", "vm-lima-host-3"}
    mine = by_host["vm-secret-host-17"]
    assert (mine["name"], mine["release"], mine["key_id"], mine["clock_offset_ms"]) == (
        WORKER["name"],
        WORKER["release"],
        WORKER["key_id"],
        WORKER["clock_offset_ms"],
    )
    assert (body["regions"]["pub-lagos"], body["regions"]["pub-lima"]) == ("live", "stale")
    html = client.get(f"/regions/{fleet[0].slug}/").content.decode()
    assert 'id="worker-list"' in html and "vm-secret-host-17" in html and "7.7.7-rc3" in html
    assert "The clock of vm-secret-host-17 is off by -2413 ms" in html
