"""The API asks the admin's questions: no credentials is a 401 naming the Bearer scheme; reading needs the
model's view permission and writing its add, change or delete permission (403 otherwise, nothing changed)."""

from __future__ import annotations

import pytest

from probes.models import Region
from tests.api.conftest import bearer
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db

READS = (
    "/api/v1/regions/",
    "/api/v1/targets/",
    "/api/v1/probes/",
    "/api/v1/measurements/",
    "/api/v1/aggregates/summary/",
    "/api/v1/aggregates/table/",
    "/api/v1/aggregates/phases/",
    "/api/v1/aggregates/series/",
    "/api/v1/aggregates/distribution/",
    "/api/v1/incidents/",
    "/api/v1/workers/",
    "/api/v1/slos/",
    "/api/v1/status-pages/",
    "/api/v1/schema/",
)
NEW_REGION = {
    "slug": "sa-lima",
    "name": "Lima",
    "city": "Lima",
    "country": "PE",
    "latitude": -12.05,
    "longitude": -77.04,
}


@pytest.fixture
def data(db):
    MeasurementFactory()
    WorkerFactory()


@pytest.mark.parametrize("url", READS)
def test_without_credentials_every_endpoint_answers_401_asking_for_a_bearer_token(client, data, url):
    response = client.get(url)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_wrong_token_is_401_and_a_well_formed_header_is_needed(client, roles):
    assert client.get("/api/v1/regions/", **bearer("lapi_not-a-token")).status_code == 401
    assert client.get("/api/v1/regions/", HTTP_AUTHORIZATION="Bearer").status_code == 401
    assert client.get("/api/v1/regions/", HTTP_AUTHORIZATION=f"Bearer {roles.viewer.token} x").status_code == 401


@pytest.mark.parametrize("url", READS)
def test_a_viewer_reads_everything(client, roles, data, url):
    response = client.get(url, **bearer(roles.viewer.token))
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("url", [u for u in READS if u != "/api/v1/schema/"])
def test_a_user_without_view_permissions_is_refused_403(client, roles, data, url):
    assert client.get(url, **bearer(roles.nobody.token)).status_code == 403


def test_a_viewer_may_not_create_change_or_delete(client, roles):
    region = RegionFactory()
    auth = bearer(roles.viewer.token)
    assert client.post("/api/v1/regions/", NEW_REGION, content_type="application/json", **auth).status_code == 403
    changed = client.patch(
        f"/api/v1/regions/{region.id}/", {"name": "Renamed"}, content_type="application/json", **auth
    )
    assert changed.status_code == 403
    assert client.delete(f"/api/v1/regions/{region.id}/", **auth).status_code == 403
    region.refresh_from_db()
    assert region.name != "Renamed"
    assert not Region.objects.filter(slug="sa-lima").exists()


def test_an_editor_creates_changes_and_deletes(client, roles):
    auth = bearer(roles.editor.token)
    created = client.post("/api/v1/regions/", NEW_REGION, content_type="application/json", **auth)
    assert created.status_code == 201, created.content
    region_id = created.json()["id"]
    changed = client.patch(
        f"/api/v1/regions/{region_id}/", {"name": "Lima, Peru"}, content_type="application/json", **auth
    )
    assert changed.status_code == 200
    assert Region.objects.get(id=region_id).name == "Lima, Peru"
    assert client.delete(f"/api/v1/regions/{region_id}/", **auth).status_code == 204
    assert not Region.objects.filter(id=region_id).exists()


def test_change_permission_alone_does_not_allow_deleting(client, roles):
    from tests.api.conftest import grant

    grant(roles.nobody.user, "view_region", "change_region")
    region = RegionFactory()
    auth = bearer(roles.nobody.token)
    ok = client.patch(f"/api/v1/regions/{region.id}/", {"active": False}, content_type="application/json", **auth)
    assert ok.status_code == 200
    assert client.delete(f"/api/v1/regions/{region.id}/", **auth).status_code == 403


def test_a_session_works_too_but_writes_need_the_csrf_token(roles):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(roles.editor.user)
    assert browser.get("/api/v1/regions/").status_code == 200
    refused = browser.post("/api/v1/regions/", NEW_REGION, content_type="application/json")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]


def test_deleting_a_target_its_probes_still_use_is_a_conflict(client, roles):
    probe = ProbeFactory()
    response = client.delete(f"/api/v1/targets/{probe.target_id}/", **bearer(roles.editor.token))
    assert response.status_code == 409
    assert "probes" in response.json()["detail"]
    assert type(probe.target).objects.filter(id=probe.target_id).exists()
