"""The browser key is public: anyone can send beacons from a script with a typed Origin. A flood from one address
is stopped at LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE, so it neither fills the database nor uses up the source:
another visitor's beacon is still stored, and the source's own OpenTelemetry exporter (the official one) still
gets through, OTLP having a budget of its own. Real HTTP requests to the site on uvicorn, from two loopback
addresses."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from probes.models import Observation
from tests.factories import IngestSourceFactory
from tests.realusers_beacon.conftest import APP, post_beacon

FLOOD = 20
PER_ADDRESS = 5


def _minute() -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0)


def _export_one_span(site, source) -> None:
    exporter = OTLPSpanExporter(
        endpoint=f"{site.origin}/otlp/v1/traces", headers={"Authorization": f"Bearer {source.token}"}, timeout=20
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "chat-backend"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        with provider.get_tracer("app").start_as_current_span("chat gpt-4o") as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                 "gen_ai.provider.name": "openai", "server.address": "api.openai.com"})  # fmt: skip
    finally:
        provider.shutdown()


@pytest.mark.asgi_env(LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE=str(PER_ADDRESS), LATENCY_BEACONS_PER_MINUTE="50")
def test_the_flood_is_stopped_per_address_and_the_others_still_get_through(site):
    # A minute that turns during the flood gives the address a second budget: then the flood is run again.
    for _ in range(2):
        source = IngestSourceFactory(allowed_origins=[APP])
        began = _minute()
        answers = [post_beacon(site, source.browser_key, from_address="127.0.0.2") for _ in range(FLOOD)]
        if _minute() == began:
            break
    assert answers == [204] * PER_ADDRESS + [429] * (FLOOD - PER_ADDRESS)
    assert Observation.objects.filter(source=source, kind="beacon").count() == PER_ADDRESS

    assert post_beacon(site, source.browser_key, from_address="127.0.0.3") == 204
    _export_one_span(site, source)
    assert Observation.objects.filter(source=source, kind="beacon").count() == PER_ADDRESS + 1
    [span] = Observation.objects.filter(source=source, kind="span")
    assert span.service == "chat-backend"
