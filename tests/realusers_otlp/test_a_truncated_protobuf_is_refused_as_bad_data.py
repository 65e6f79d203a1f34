"""A body that is not a whole protobuf (or not JSON, or not gzip) is answered 400 with a google.rpc.Status
saying why, as the OTLP specification's "bad data" asks (the client must not retry), and nothing is stored."""

from __future__ import annotations

import gzip
import time

from google.rpc import status_pb2

from probes.models import Observation
from tests.realusers_otlp.conftest import JSON, trace_request


def _genai_body() -> bytes:
    t = time.time_ns()
    attributes = {"gen_ai.request.model": "gpt-4o", "gen_ai.operation.name": "chat"}
    return trace_request([{"start": t, "end": t + 1_000_000, "attributes": attributes}]).SerializeToString()


def test_a_truncated_protobuf_is_answered_400_with_a_status(site, source, post):
    body = _genai_body()
    response = post(site, "traces", body[: len(body) - 7], token=source.token)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/x-protobuf"
    status = status_pb2.Status.FromString(response.content)
    assert "ExportTraceServiceRequest" in status.message
    assert Observation.objects.count() == 0


def test_broken_json_and_broken_gzip_are_answered_400(site, source, post):
    response = post(site, "traces", b'{"resourceSpans": [', token=source.token, content_type=JSON)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == JSON
    assert "not JSON" in response.json()["message"]

    squeezed = gzip.compress(_genai_body())
    response = post(site, "traces", squeezed[:-10], token=source.token, **{"Content-Encoding": "gzip"})
    assert response.status_code == 400
    assert Observation.objects.count() == 0

    response = post(site, "metrics", b"\xff\xff\xff", token=source.token)
    assert response.status_code == 400
