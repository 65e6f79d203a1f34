"""OTLP/HTTP JSON: the official JSON exporter (opentelemetry-exporter-otlp-json-http) sends the same call as
JSON (hex trace ids, lowerCamelCase keys, integer enums); it is stored as the protobuf one is, and the answer
comes back as JSON."""

from __future__ import annotations

import json

from probes.models import Observation
from tests.realusers_otlp.conftest import JSON, wait_for_rows


def test_a_call_exported_as_json_is_stored(site, source, mock_target, instrumented):
    app = instrumented(
        site, source, encoding="json", resource={"geo.country.iso_code": "KE", "geo.locality.name": "Nairobi"}
    )
    app.chat(ttft_ms=100, tokens=4)
    [call] = wait_for_rows(Observation, 1)
    assert (call.model, call.target_id, call.output_tokens) == ("mock-model", mock_target.id, 4)
    assert (call.country, call.city) == ("KE", "Nairobi")
    assert call.total_ms >= 100


def test_the_answer_to_json_is_json(site, source, post):
    body = json.dumps({"resourceSpans": []}).encode()
    response = post(site, "traces", body, token=source.token, content_type=JSON)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    assert response.json() == {}  # full success: partial_success left unset
