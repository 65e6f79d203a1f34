"""/api/workloads: the readings of probes.readings.workloads as JSON with the page's two figures; a bad
parameter, a missing target or a window over 7 days is a 400 naming the parameter; anonymous callers get the JSON
403 every /api/* endpoint gives."""

from __future__ import annotations

from datetime import timedelta

import plotly.graph_objects as go
import pytest
from django.utils import timezone

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client, django_user_model):
    user = django_user_model.objects.create_user(username="workloads-viewer", password="a-long-test-password-7731")
    client.force_login(user)
    return user


@pytest.fixture
def measured(make_probe, make_region, add_calls):
    region = make_region(slug="wl-oslo", name="Oslo")
    probe = make_probe(regions=[region])
    at = timezone.now() - timedelta(minutes=30)
    add_calls(probe, region, at, [
        *[{"workload": "short", "input_tokens": 20, "ttft_ms": 210.0, "ratelimit_remaining_requests": 50}] * 5,
        *[{"workload": "prompt_10k", "input_tokens": 10_000, "ttft_ms": 5200.0}] * 5,
        {"workload": "prompt_10k", "outcome": "rate_limited", "ttft_ms": None, "http_status": 429,
         "ratelimit_remaining_requests": 0},
    ])  # fmt: skip
    return probe


def test_the_answer_carries_each_regions_readings_and_both_figures(client, viewer, measured):
    response = client.get("/api/workloads", {"target": measured.target_id, "window": "1h"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    (region,) = body["regions"]
    assert region["region"] == "wl-oslo"
    assert (region["calls"], region["rate_limited"], region["remaining_requests_min"]) == (11, 1, 0)
    assert region["remaining_tokens_min"] is None
    assert [c["workload"] for c in region["classes"]] == ["short", "prompt_10k"]
    assert region["fit"]["slope_ms_per_1k"] == pytest.approx(500.0)
    assert region["fit"]["prefill_tokens_per_s"] == pytest.approx(2000.0)
    assert region["cache"]["hit_ratio"] is None
    assert sum(b["calls"] for b in region["rate_limits"]) == 11
    assert body["bucket_s"] == 60
    assert body["no_data"] == ""
    for name in ("prefill", "rate_limits"):
        go.Figure(body["figures"][name])  # plotly refuses a property it does not know
    prefill = body["figures"]["prefill"]
    roles = [trace["meta"]["role"] for trace in prefill["data"]]
    assert roles == ["classes", "fit"]
    assert prefill["layout"]["xaxis"]["type"] == "log"
    panels = [trace["meta"]["panel"] for trace in body["figures"]["rate_limits"]["data"]]
    assert panels == ["ratio", "requests"]  # no call reported its tokens remaining: no panel for them


def test_without_calls_in_the_window_the_answer_says_so(client, viewer, make_probe):
    probe = make_probe()
    body = client.get("/api/workloads", {"target": probe.target_id}).json()
    assert body["regions"] == []
    assert "No measurements" in body["no_data"]


BAD = [
    ({}, "target"),
    ({"target": "all"}, "target"),
    ({"target": "abc"}, "target"),
    ({"target": "999999"}, "target"),
    ({"window": "30d"}, "window"),
    ({"window": "custom", "since": "8d"}, "since"),
    ({"window": "2y"}, "window"),
    ({"region": "nowhere"}, "region"),
    ({"window": "1h", "since": "2h"}, "since"),
]


@pytest.mark.parametrize(("params", "param"), BAD, ids=[str(p) for p, _ in BAD])
def test_a_bad_parameter_is_a_400_naming_it(client, viewer, measured, params, param):
    query = {"target": measured.target_id, **params} if "target" not in params and params else params
    response = client.get("/api/workloads", query)
    assert response.status_code == 400
    body = response.json()
    assert body["param"] == param
    assert body["error"]


def test_a_week_is_long_enough(client, viewer, measured):
    response = client.get("/api/workloads", {"target": measured.target_id, "window": "7d"})
    assert response.status_code == 200
    assert response.json()["regions"][0]["calls"] == 11


def test_an_anonymous_caller_gets_a_json_403(client, measured):
    response = client.get("/api/workloads", {"target": measured.target_id})
    assert response.status_code == 403
    assert response.json() == {"error": "login required"}
