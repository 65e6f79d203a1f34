"""/api/v1/slos/<id>/status/ and /report/ follow the objectives' API rules: a token is needed (401), and the view
permission on objectives (403 without it); an objective that does not exist is a JSON 404."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("read", ["status", "report"])
def test_the_figures_need_a_token_and_the_view_permission(client, roles, known, read):
    url = f"/api/v1/slos/{known.objective.id}/{read}/"
    assert client.get(url).status_code == 401
    assert client.get(url, **bearer(roles.nobody.token)).status_code == 403
    assert client.get(url, **bearer(roles.viewer.token)).status_code == 200
    missing = client.get(f"/api/v1/slos/{known.objective.id + 1000}/{read}/", **bearer(roles.viewer.token))
    assert missing.status_code == 404 and "detail" in missing.json()
