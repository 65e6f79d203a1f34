"""The edges of cumulative streams: an application that restarted (a new start time) has its point taken whole;
counts that went down without a new start time are a reset and taken whole too; a point no newer than the last
one (an exporter's retry) adds nothing; and the duration histogram of an instance that sent GenAI spans in the
last 24 hours adds nothing either."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from probes.models import ObservationRollup, SpanResource
from probes.realusers.otlp import resource_key
from probes.realusers.otlp_metrics import export_metrics
from tests.realusers_otlp.conftest import attributes

S = 1_000_000_000
RESOURCE = {"service.name": "worker", "service.instance.id": "pod-7"}


def _export(source, count: int, start_ns: int, time_ns: int, errors: bool = False):
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    rm.resource.attributes.extend(attributes(RESOURCE))
    metric = rm.scope_metrics.add().metrics.add(name="gen_ai.client.operation.duration", unit="s")
    metric.histogram.aggregation_temporality = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    point = metric.histogram.data_points.add(start_time_unix_nano=start_ns, time_unix_nano=time_ns, count=count)
    point.explicit_bounds.extend([1.0, 2.0])
    point.bucket_counts.extend([0, count, 0])
    values = {"gen_ai.request.model": "m", "server.address": "llm.internal"}
    if errors:
        values["error.type"] = "timeout"
    point.attributes.extend(attributes(values))
    return export_metrics(source, request, None, datetime.now(UTC))


def _samples() -> int:
    return sum(r.samples for r in ObservationRollup.objects.all())


def test_restarts_resets_and_repeats(source):
    t = time.time_ns() - 600 * S
    _export(source, 5, t, t + 10 * S)
    assert _samples() == 5
    _export(source, 5, t, t + 10 * S)  # the same export again
    _export(source, 7, t, t + 5 * S)  # older than the last one
    assert _samples() == 5
    _export(source, 8, t, t + 20 * S)
    assert _samples() == 8
    _export(source, 3, t + 100 * S, t + 110 * S)  # restarted: its 3 calls are new
    assert _samples() == 11
    _export(source, 2, t + 100 * S, t + 120 * S)  # counts went down, same start: a reset
    assert _samples() == 13


def test_errors_are_counted_from_the_error_type_attribute(source):
    t = time.time_ns() - 600 * S
    outcome = _export(source, 4, t, t + 10 * S, errors=True)
    assert outcome.calls == 4
    [rollup] = ObservationRollup.objects.all()
    assert (rollup.samples, rollup.errors) == (4, 4)


def test_an_instance_that_sent_spans_lately_is_skipped_and_an_old_one_is_not(source):
    t = time.time_ns() - 600 * S
    key = resource_key(RESOURCE)
    SpanResource.objects.create(source=source, key=key, last_span_at=datetime.now(UTC) - timedelta(hours=1))
    outcome = _export(source, 5, t, t + 10 * S)
    assert (outcome.skipped_duplicate, _samples()) == (1, 0)
    SpanResource.objects.filter(key=key).update(last_span_at=datetime.now(UTC) - timedelta(hours=25))
    _export(source, 9, t, t + 20 * S)
    assert _samples() == 4  # only the calls after the skipped point: those were counted from spans
