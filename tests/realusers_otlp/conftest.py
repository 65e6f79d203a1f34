"""The OTLP receiver's tests: the site on a real uvicorn (the test database, committed data), real OpenTelemetry
clients exporting to it over HTTP, and the official openai SDK, instrumented by
opentelemetry-instrumentation-openai-v2, calling the mock LLM server.

- `site`: uvicorn serving the site; `@pytest.mark.asgi_env(NAME="value")` adds to its environment (a trusted
  proxy, a lower rate limit).
- `source`: an ingest source (its secret on `.token`).
- `instrumented`: `instrumented(site, source, resource={...}, encoding="protobuf"|"json", headers={...},
  compression=None, spans=True, metrics=False, metric_options={...})` (the options go to the metric exporter)
  -> an Instrumented (its openai client, tracer and meter providers and metric reader); the instrumentation is
  removed at the end of the test.
- `post`: raw requests to the receiver (`post(site, "traces", body, token=..., content_type=..., headers=...)`).
- `genai_spans(n)`, `duration_points(n)`: export requests of n GenAI chat spans, or n delta duration points (one
  call each, of models model-0 ... model-<n-1>).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from devtools.harness import UvicornServer, wait_for

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# probes.realusers.otlp's encodings ("protobuf", "json") to their Content-Type.
CONTENT_TYPES = {"protobuf": PROTOBUF, "json": JSON}


@pytest.fixture
def site(transactional_db, test_redis_url, settings, tmp_path, request) -> Iterator[UvicornServer]:
    from tests.conftest import running_site

    yield from running_site(request, settings, test_redis_url, tmp_path, channel="otlp", collect_static=False)


@pytest.fixture
def source(transactional_db):
    from tests.factories import IngestSourceFactory

    return IngestSourceFactory()


@pytest.fixture
def mock_target(transactional_db, mockllm):
    """The configured target the mock server plays: an OpenAI-style endpoint serving "mock-model"."""
    from probes.realusers import matching
    from tests.factories import TargetFactory

    matching.forget()
    return TargetFactory(url=f"{mockllm.base_url}/v1/chat/completions", api_style="openai", model="mock-model")


@dataclass
class Instrumented:
    client: Any  # openai.OpenAI
    tracer_provider: Any
    meter_provider: Any
    reader: Any  # PeriodicExportingMetricReader, or None

    def chat(self, prompt: str = "Say hello", **knobs) -> tuple[str, float]:
        """One streamed chat completion; returns its text and the seconds it took as the caller saw them."""
        import time

        started = time.perf_counter()
        stream = self.client.chat.completions.create(
            model="mock-model",
            messages=[{"role": "user", "content": prompt}],
            stream=True,
            stream_options={"include_usage": True},
            extra_query=knobs,
        )
        text = "".join((c.choices[0].delta.content or "") if c.choices else "" for c in stream)
        return text, time.perf_counter() - started


@pytest.fixture
def instrumented(mockllm) -> Iterator[Any]:
    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    made: list[Instrumented] = []

    def make(
        site,
        source,
        resource: dict | None = None,
        encoding: str = "protobuf",
        headers: dict | None = None,
        compression: Any = None,
        spans: bool = True,
        metrics: bool = False,
        metric_options: dict | None = None,
    ) -> Instrumented:
        if encoding == "json":
            from opentelemetry.exporter.otlp.json.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
        else:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore[assignment]
                OTLPMetricExporter,
            )
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment]
                OTLPSpanExporter,
            )
        sent = {"Authorization": f"Bearer {source.token}", **(headers or {})}
        res = Resource.create({"service.name": "chat-app", **(resource or {})})
        tracer_provider = TracerProvider(resource=res)
        if spans:
            exporter = OTLPSpanExporter(
                endpoint=f"{site.origin}/otlp/v1/traces", headers=sent, timeout=20, compression=compression
            )
            # Simple: each span is exported as it ends, so the call's row exists when the call returns.
            tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = None
        readers = []
        if metrics:
            metric_exporter = OTLPMetricExporter(
                endpoint=f"{site.origin}/otlp/v1/metrics", headers=sent, timeout=20, **(metric_options or {})
            )
            # Exported when the test flushes, not on a timer.
            reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=3_600_000)
            readers.append(reader)
        meter_provider = MeterProvider(metric_readers=readers, resource=res)
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
        client = openai.OpenAI(base_url=f"{mockllm.base_url}/v1", api_key="sk-test", max_retries=0)
        one = Instrumented(client, tracer_provider, meter_provider, reader)
        made.append(one)
        return one

    yield make
    if made:
        OpenAIInstrumentor().uninstrument()
    for one in made:
        one.tracer_provider.shutdown()
        one.meter_provider.shutdown()


@pytest.fixture
def post():
    import requests

    def send(site, signal: str, body: bytes, token: str | None = None, content_type: str = PROTOBUF, **headers):
        sent = {"Content-Type": content_type, **headers}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return requests.post(f"{site.origin}/otlp/v1/{signal}", data=body, headers=sent, timeout=20)

    return send


def wait_for_rows(model, count: int, timeout: float = 15.0, **filters):
    """The rows of a model once there are at least `count` (exports are synchronous, but a busy machine may
    answer late)."""
    return wait_for(
        lambda: list(model.objects.filter(**filters)) if model.objects.filter(**filters).count() >= count else None,
        timeout,
        message=f"{count} {model.__name__} rows",
    )


def attributes(values: dict) -> list:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            any_value = AnyValue(bool_value=value)
        elif isinstance(value, int):
            any_value = AnyValue(int_value=value)
        elif isinstance(value, float):
            any_value = AnyValue(double_value=value)
        else:
            any_value = AnyValue(string_value=str(value))
        out.append(KeyValue(key=key, value=any_value))
    return out


def trace_request(spans: list[dict], resource: dict | None = None):
    """An ExportTraceServiceRequest of one resource; each span a dict of start/end (ns), attributes, events
    [(name, time_ns, attributes)] and status (a Status code)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

    built = []
    for i, s in enumerate(spans):
        span = Span(
            trace_id=bytes(range(16)),
            span_id=(i + 1).to_bytes(8, "big"),
            name=s.get("name", "chat"),
            start_time_unix_nano=s["start"],
            end_time_unix_nano=s["end"],
            attributes=attributes(s.get("attributes", {})),
            status=Status(code=s.get("status", Status.STATUS_CODE_UNSET)),
        )
        for name, time_ns, values in s.get("events", []):
            span.events.add(name=name, time_unix_nano=time_ns, attributes=attributes(values))
        built.append(span)
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource={"attributes": attributes({"service.name": "raw-app", **(resource or {})})},
                scope_spans=[ScopeSpans(spans=built)],
            )
        ]
    )


CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "server.address": "api.openai.com"}


def genai_spans(n: int):
    """An ExportTraceServiceRequest of n GenAI chat spans of 100 ms, a second ago."""
    import time

    t = time.time_ns() - 10**9
    return trace_request([{"start": t, "end": t + 10**8, "attributes": CHAT} for _ in range(n)])


def duration_points(n: int):
    """An ExportMetricsServiceRequest of n delta gen_ai.client.operation.duration points of one call each."""
    import time

    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

    t = time.time_ns()
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    metric = scope.metrics.add(name="gen_ai.client.operation.duration", unit="s")
    metric.histogram.aggregation_temporality = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
    for i in range(n):
        point = metric.histogram.data_points.add(start_time_unix_nano=t - 10**9, time_unix_nano=t, count=1)
        point.explicit_bounds.extend([1.0])
        point.bucket_counts.extend([1, 0])
        point.attributes.add(key="gen_ai.request.model").value.string_value = f"model-{i}"
    return request
