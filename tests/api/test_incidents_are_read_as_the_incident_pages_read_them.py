"""/api/v1/incidents/ lists the incidents newest first as probes.readings describes them (target by name, regions
by slug, open or resolved), filtered by target and state; one incident by id, and a JSON 404 for any other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.api.conftest import bearer
from tests.factories import IncidentFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_incidents_list_filter_and_detail(client, roles):
    target, other = TargetFactory(name="Claude"), TargetFactory()
    lagos = RegionFactory(slug="zz-lagos")
    now = datetime.now(UTC)
    open_one = IncidentFactory(target=target, regions=[lagos])
    IncidentFactory(target=other, started_at=now - timedelta(hours=3), resolved_at=now - timedelta(hours=2))
    auth = bearer(roles.viewer.token)

    listed = client.get("/api/v1/incidents/", **auth).json()
    assert listed["count"] == 2
    assert [row["state"] for row in listed["results"]] == ["open", "resolved"]
    first = listed["results"][0]
    assert first["id"] == open_one.id and first["target"] == "Claude"
    assert [r["slug"] for r in first["regions"]] == ["zz-lagos"]

    assert [r["id"] for r in client.get(f"/api/v1/incidents/?target={target.id}", **auth).json()["results"]] == [
        open_one.id
    ]
    resolved = client.get("/api/v1/incidents/?state=resolved", **auth).json()["results"]
    assert [r["state"] for r in resolved] == ["resolved"]
    assert client.get("/api/v1/incidents/?state=gone", **auth).status_code == 400

    assert client.get(f"/api/v1/incidents/{open_one.id}/", **auth).json()["summary"] == open_one.summary
    # "%0A..." : a line break in the id (found by schemathesis) once fell through to the site's HTML 404.
    for missing in ("999999", "99999999999999999999999", "abc", "%0A%C3%AA", "a%0Ab"):
        response = client.get(f"/api/v1/incidents/{missing}/", **auth)
        assert response.status_code == 404 and response["Content-Type"] == "application/json"
