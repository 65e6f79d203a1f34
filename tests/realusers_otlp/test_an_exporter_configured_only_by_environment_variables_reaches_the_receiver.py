"""Standard OTLP exporters need no code of ours: the SDK's own environment variables, the endpoint set to the
site's /otlp and the token as a percent-encoded header (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20...),
are enough for the protobuf and the JSON exporter alike."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from probes.models import Observation


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_endpoint_and_header_from_the_environment(site, source, monkeypatch, encoding):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"{site.origin}/otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer%20{source.token}")
    if encoding == "json":
        from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment]
            OTLPSpanExporter,
        )
    provider = TracerProvider(resource=Resource.create({"service.name": "env-configured"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    try:
        tracer = provider.get_tracer("app")
        with tracer.start_as_current_span("chat gpt-4o-mini") as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                                 "gen_ai.provider.name": "openai", "server.address": "api.openai.com"})  # fmt: skip
    finally:
        provider.shutdown()
    [call] = Observation.objects.all()
    assert (call.service, call.model, call.host) == ("env-configured", "gpt-4o-mini", "api.openai.com")
