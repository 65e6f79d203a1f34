"""A metric point or a GenAI span whose time lies before LATENCY_RETENTION_DAYS or more than an hour ahead (a
sender's clock in 1970, or in 2058) is rejected in partial_success and stored nowhere: its hourly rollup would
otherwise be kept forever, for an hour nobody will read. The points and spans inside the window are stored."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from probes.models import Observation, ObservationRollup
from tests.realusers_otlp.conftest import CHAT, duration_points, trace_request

NS = 10**9
# 1970-01-01 00:00:01 UTC; 2058-03-01 UTC; ten days ago, within the 30 days of raw retention.
IN_1970 = NS
IN_2058 = int(datetime(2058, 3, 1, tzinfo=UTC).timestamp()) * NS
TEN_DAYS_AGO = time.time_ns() - 10 * 86400 * NS


@pytest.mark.asgi_env(LATENCY_RETENTION_DAYS="30")
def test_metric_points_from_1970_and_2058_are_rejected(site, source, post):
    request = duration_points(3)
    points = request.resource_metrics[0].scope_metrics[0].metrics[0].histogram.data_points
    for point, when in zip(points, (IN_1970, IN_2058, TEN_DAYS_AGO), strict=True):
        point.start_time_unix_nano = when - NS
        point.time_unix_nano = when
    response = post(site, "metrics", request.SerializeToString(), token=source.token)
    assert response.status_code == 200
    partial = ExportMetricsServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_data_points == 2
    assert "older than the retention" in partial.error_message
    assert "more than an hour in the future" in partial.error_message
    [rollup] = ObservationRollup.objects.all()
    assert (rollup.model, rollup.samples) == ("model-2", 1)
    assert abs(rollup.hour.timestamp() * NS - TEN_DAYS_AGO) <= 3600 * NS


@pytest.mark.asgi_env(LATENCY_RETENTION_DAYS="30")
def test_spans_from_1970_and_2058_are_rejected(site, source, post):
    request = trace_request(
        [{"start": when, "end": when + NS, "attributes": CHAT} for when in (IN_1970, IN_2058, TEN_DAYS_AGO)]
    )
    response = post(site, "traces", request.SerializeToString(), token=source.token)
    assert response.status_code == 200
    partial = ExportTraceServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_spans == 2
    assert "older than the retention" in partial.error_message
    [call] = Observation.objects.all()
    assert abs(call.observed_at.timestamp() * NS - TEN_DAYS_AGO) < NS
    assert ObservationRollup.objects.count() == 1
