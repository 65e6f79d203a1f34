"""A JSON body nested deeper than any the API takes is a 400 saying so, never a 500: 100,000 `[` (which makes
json itself raise RecursionError), and a body shallow enough to parse but deep enough to exhaust the stack
further on (a target's headers nested 900 levels), on every resource that takes a body, by a token that may
write it. Nothing is stored."""

from __future__ import annotations

import json

import pytest

from probes.models import Probe, Region, Target
from tests.api.conftest import bearer
from tests.factories import ProbeFactory, RegionFactory

pytestmark = pytest.mark.django_db

BRACKETS = "[" * 100_000


def nested(depth: int) -> dict:
    value: dict = {"X-Leaf": "v"}
    for _ in range(depth):
        value = {"X-Deeper": value}
    return value


def target_body(**fields) -> str:
    return json.dumps(
        {
            "name": "Deep",
            "api_style": "openai",
            "url": "https://api.example.com/v1/chat/completions",
            "model": "m",
            "api_key_env": "DEEP_KEY",
            **fields,
        }
    )


def too_deep(response) -> bool:
    return response.status_code == 400 and "nests deeper than" in response.json()["detail"]


@pytest.fixture
def existing():
    probe = ProbeFactory(regions=[RegionFactory(slug="deep-region")])
    return {"regions": probe.regions.get(), "targets": probe.target, "probes": probe}


@pytest.mark.parametrize("body", [BRACKETS, '{"a":' * 50_000, target_body(headers=nested(900))])
@pytest.mark.parametrize("resource", ["targets", "regions", "probes"])
def test_a_deep_body_creating_an_object_is_a_400(client, roles, existing, resource, body):
    counts = (Target.objects.count(), Region.objects.count(), Probe.objects.count())
    response = client.post(f"/api/v1/{resource}/", body, content_type="application/json", **bearer(roles.editor.token))
    assert too_deep(response), response.content[:300]
    assert (Target.objects.count(), Region.objects.count(), Probe.objects.count()) == counts


@pytest.mark.parametrize("method", ["put", "patch"])
@pytest.mark.parametrize("resource", ["targets", "regions", "probes"])
def test_a_deep_body_changing_an_object_is_a_400(client, roles, existing, resource, method):
    obj = existing[resource]
    url = f"/api/v1/{resource}/{obj.id}/"
    response = getattr(client, method)(url, BRACKETS, content_type="application/json", **bearer(roles.editor.token))
    assert too_deep(response), response.content[:300]


def test_a_target_with_headers_a_few_levels_deep_is_judged_by_the_models_rules(client, roles):
    # Not the parser's business: within the bound, the model's validators answer (headers are name: value).
    body = target_body(headers=nested(3))
    response = client.post("/api/v1/targets/", body, content_type="application/json", **bearer(roles.editor.token))
    assert response.status_code == 400 and "headers" in response.json()
    assert not Target.objects.filter(name="Deep").exists()


def test_an_ordinary_body_is_still_read(client, roles):
    body = target_body(headers={"X-Team": "latency"})
    response = client.post("/api/v1/targets/", body, content_type="application/json", **bearer(roles.editor.token))
    assert response.status_code == 201, response.content
    assert Target.objects.get(name="Deep").headers == {"X-Team": "latency"}
