"""A query parameter or body value with a NUL character (which PostgreSQL cannot store or even be asked about)
is refused as the bad value it is, naming it, never a 500: the case schemathesis found in the region filter."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer
from tests.factories import RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/workers/?region=eu%00x",
        "/api/v1/measurements/?region=eu%00x",
        "/api/v1/aggregates/table/?region=eu%00x",
        "/api/v1/workers/?region=ok&region=%00",
    ],
)
def test_a_nul_in_a_region_filter_is_a_400_naming_it(client, roles, url):
    RegionFactory(slug="ok")
    response = client.get(url, **bearer(roles.viewer.token))
    assert response.status_code == 400
    assert list(response.json()) == ["region"]


def test_a_nul_in_a_body_is_a_400_naming_the_field(client, roles):
    TargetFactory(name="Claude")
    body = {"target": "Cla\x00ude", "name": "p\x00", "regions": ["ok\x00"]}
    response = client.post("/api/v1/probes/", body, content_type="application/json", **bearer(roles.editor.token))
    assert response.status_code == 400
    assert set(response.json()) == {"target", "name", "regions"}
