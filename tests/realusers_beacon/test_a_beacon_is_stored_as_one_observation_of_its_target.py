"""A beacon from an allowed origin is answered 204 with the origin allowed, and stored as one observation of
kind beacon: the target it names (host and model from the target), the first-token and total times from the
page's readings, the tokens, the label as the service, placed by the sender's address, the address not kept.
Fields a beacon does not have (a prompt, an answer) are dropped unread."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from probes.models import Observation, ObservationRollup
from probes.proxy import parse_proxies
from tests.factories import IngestSourceFactory, TargetFactory
from tests.realusers_beacon.conftest import APP, timings

pytestmark = pytest.mark.django_db


def test_a_beacon_naming_a_target_is_stored_against_it(app_source, send_beacon, settings):
    settings.LATENCY_TRUSTED_PROXIES = ["127.0.0.1"]
    settings.LATENCY_TRUSTED_PROXY_NETWORKS = parse_proxies(["127.0.0.1"])
    target = TargetFactory(name="Chat prod", url="https://api.example.com/v1/chat/completions", model="gpt-4o")

    response = send_beacon(
        app_source.browser_key, target="Chat prod", label="chat", tokens="42",
        headers={"X-Forwarded-For": "41.58.0.1"},
    )  # fmt: skip

    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == APP
    assert "Origin" in response["Vary"]
    assert "Access-Control-Allow-Credentials" not in response
    [row] = Observation.objects.all()
    assert (row.kind, row.source_id, row.target_id) == ("beacon", app_source.id, target.id)
    assert (row.host, row.model, row.service) == ("api.example.com", "gpt-4o", "chat")
    assert (row.ttft_ms, row.total_ms, row.output_tokens, row.error_type) == (850.0, 2500.0, 42, "")
    assert (row.country, row.city, row.place_from) == ("NG", "Lagos", "address")
    assert "41.58.0.1" not in str(Observation.objects.values().get())
    [rollup] = ObservationRollup.objects.all()
    assert (rollup.target_id, rollup.samples, rollup.errors) == (target.id, 1, 0)


def test_a_beacon_naming_no_known_target_is_kept_under_other_providers(app_source, send_beacon):
    TargetFactory(name="Chat prod")

    response = send_beacon(app_source.browser_key, target="Nonesuch", error="AbortError")

    assert response.status_code == 204
    [row] = Observation.objects.all()
    assert (row.target_id, row.host, row.model, row.error_type) == (None, "", "", "AbortError")
    # From loopback with no trusted proxy the address places nobody; no default either.
    assert (row.country, row.city, row.place_from) == ("", "", "none")


def test_a_beacon_without_a_first_token_leaves_ttft_empty(send_beacon):
    source = IngestSourceFactory(allowed_origins=[APP], default_country="GB", default_city="London")

    response = send_beacon(source.browser_key, first_token="", error="http_500")

    assert response.status_code == 204
    row = Observation.objects.get()
    assert (row.ttft_ms, row.total_ms, row.error_type) == (None, 2500.0, "http_500")
    assert (row.country, row.city, row.place_from) == ("GB", "London", "default")


def test_fields_a_beacon_does_not_have_are_dropped_unread(app_source, send_beacon):
    body = urlencode(
        {"key": app_source.browser_key, **timings(), "prompt": "What is my bank PIN?", "answer": "It is 4821."}
    )

    assert send_beacon(app_source.browser_key, body=body).status_code == 204

    stored = json.dumps(list(Observation.objects.values()) + list(ObservationRollup.objects.values()), default=str)
    assert "PIN" not in stored and "4821" not in stored
