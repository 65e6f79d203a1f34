"""Metrics other than the GenAI duration and time-to-first-chunk histograms are ignored without complaint; a
point of those that cannot be read (an unknown unit, no temporality, buckets that do not fit the bounds) is
rejected, and the answer's partial_success says how many and why."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from probes.models import ObservationRollup

DELTA = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA


def _histogram(scope, name: str, unit: str, temporality: int, bounds: list[float], counts: list[int]) -> None:
    t = time.time_ns()
    metric = scope.metrics.add(name=name, unit=unit)
    metric.histogram.aggregation_temporality = temporality
    point = metric.histogram.data_points.add(start_time_unix_nano=t - 10**9, time_unix_nano=t, count=sum(counts))
    point.explicit_bounds.extend(bounds)
    point.bucket_counts.extend(counts)


def test_the_answer_counts_the_rejected_points(site, source, post):
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    _histogram(scope, "gen_ai.client.operation.duration", "s", DELTA, [1.0], [2, 1])  # good: 3 calls
    _histogram(scope, "gen_ai.client.operation.duration", "{token}", DELTA, [1.0], [1, 1])  # unit
    _histogram(scope, "gen_ai.client.operation.time_to_first_chunk", "s", 0, [1.0], [1, 0])  # temporality
    _histogram(scope, "gen_ai.client.operation.duration", "ms", DELTA, [1.0, 2.0], [1, 1])  # buckets
    _histogram(scope, "http.client.request.duration", "s", DELTA, [1.0], [5, 5])  # not ours: ignored
    response = post(site, "metrics", request.SerializeToString(), token=source.token)
    assert response.status_code == 200
    partial = ExportMetricsServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_data_points == 3
    assert "unit" in partial.error_message and "temporality" in partial.error_message
    assert sum(r.samples for r in ObservationRollup.objects.all()) == 3
