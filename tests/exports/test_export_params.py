"""Every unusable export parameter is a 400 whose message names it, on
both exports, before any CSV is sent."""

from __future__ import annotations

import json

import pytest
from django.test import AsyncClient

from tests.export_support import close_async_thread_connections, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

CASES = [
    ("target", {"target": "abc"}),
    ("target", {"target": "999999"}),
    ("probe", {"probe": "-1"}),
    ("probe", {"probe": "999999"}),
    ("region", {"region": "atlantis"}),
    ("outcome", {"outcome": "exploded"}),
    ("since", {"since": "yesterday"}),
    ("until", {"until": "2026-13-45"}),
    ("since", {"since": "2026-03-02T10:00Z", "until": "2026-03-02T09:00Z"}),
    ("since", {"since": "2024-01-01T00:00Z", "until": "2026-01-01T00:00Z"}),
    ("since", {"since": ["1h", "2h"]}),
    ("bucket", {"bucket": "10m"}),
]


@pytest.fixture
def client(django_user_model, make_region):
    make_region(slug="known")
    client = AsyncClient()
    client.force_login(viewer(django_user_model))
    return client


@pytest.mark.parametrize("url", ["/export/measurements.csv", "/export/regions.csv"])
@pytest.mark.parametrize(("param", "query"), CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CASES)])
async def test_a_bad_value_is_a_400_naming_the_parameter(client, url, param, query):
    response = await client.get(url, query)
    assert response.status_code == 400
    body = json.loads(response.content)
    assert body["param"] == param
    assert param in body["error"]


async def test_good_values_are_accepted(client):
    response = await client.get("/export/regions.csv", {"region": "known", "outcome": "ok", "bucket": "all"})
    assert response.status_code == 200
