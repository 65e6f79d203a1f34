"""Only GenAI calls are stored: the application's other spans (HTTP, database, its own) and agent or tool steps
are ignored without complaint; a GenAI span that cannot be a call (it ends before it starts) is rejected, and
the answer says so in partial_success, as the OTLP specification asks."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from probes.models import Observation
from tests.realusers_otlp.conftest import trace_request

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
        "server.address": "api.openai.com"}  # fmt: skip


def test_only_the_genai_call_is_stored_and_the_broken_one_is_reported(site, source, post):
    t = time.time_ns() - 5_000_000_000
    request = trace_request(
        [
            {"start": t, "end": t + 900_000_000, "attributes": {**CHAT, "gen_ai.usage.output_tokens": 42}},
            {"start": t, "end": t + 10_000_000, "attributes": {"http.request.method": "GET", "url.path": "/"}},
            {"start": t, "end": t + 5_000_000, "attributes": {"gen_ai.operation.name": "execute_tool",
                                                                "gen_ai.tool.name": "search"}},
            {"start": t, "end": t - 1, "attributes": CHAT},  # ends before it starts
            {"start": t, "end": t + 2_000_000_000, "status": Status.STATUS_CODE_ERROR, "attributes": CHAT},
        ]
    )  # fmt: skip
    response = post(site, "traces", request.SerializeToString(), token=source.token)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert "end no earlier than its start" in answer.partial_success.error_message

    calls = sorted(Observation.objects.all(), key=lambda o: o.total_ms)
    assert [(c.host, c.model, c.total_ms, c.output_tokens, c.error_type) for c in calls] == [
        ("api.openai.com", "gpt-4o", 900.0, 42, ""),
        ("api.openai.com", "gpt-4o", 2000.0, None, "_OTHER"),  # status ERROR without error.type
    ]


def test_a_full_success_leaves_partial_success_unset(site, source, post):
    t = time.time_ns()
    request = trace_request([{"start": t, "end": t + 1_000_000, "attributes": {"http.request.method": "GET"}}])
    response = post(site, "traces", request.SerializeToString(), token=source.token)
    assert response.status_code == 200
    assert not ExportTraceServiceResponse.FromString(response.content).HasField("partial_success")
    assert Observation.objects.count() == 0
