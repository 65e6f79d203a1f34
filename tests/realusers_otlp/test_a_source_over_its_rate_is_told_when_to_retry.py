"""Over LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE in a minute (an empty export counts one), a source is answered
429 with Retry-After (a retryable answer in OTLP: exporters wait that long), and what it sent is not stored."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.factories import IngestSourceFactory


@pytest.mark.asgi_env(LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE="2", LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST="2")
def test_the_third_request_in_a_minute_is_429(site, source, post):
    empty = ExportTraceServiceRequest().SerializeToString()
    answers = [post(site, "traces", empty, token=source.token) for _ in range(3)]
    # A minute may turn between the requests; then the count starts again, so allow one more try.
    if answers[-1].status_code == 200:
        answers.append(post(site, "traces", empty, token=source.token))
    limited = answers[-1]
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    # Another source has its own count.
    other = IngestSourceFactory()
    assert post(site, "traces", empty, token=other.token).status_code == 200
