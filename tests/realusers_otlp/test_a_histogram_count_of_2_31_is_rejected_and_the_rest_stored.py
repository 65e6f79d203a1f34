"""A histogram point counting 2^31 calls or more (more than the rollups' integer columns hold, and no real
application's calls between two exports) is rejected as a bad data point in partial_success, never a 500; the
export's other points are stored. Exponential histograms' zero bucket counts too."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from probes.models import ObservationRollup
from tests.realusers_otlp.conftest import duration_points


@pytest.mark.parametrize("counts", [[2**31, 0], [2**30, 2**30], [2**64 - 1, 0]])
def test_the_huge_point_is_rejected_and_the_others_stored(site, source, post, counts):
    request = duration_points(3)
    metric = request.resource_metrics[0].scope_metrics[0].metrics[0]
    huge = metric.histogram.data_points[1]
    del huge.bucket_counts[:]
    huge.bucket_counts.extend(counts)
    huge.count = min(sum(counts), 2**64 - 1)
    exponential = (
        request.resource_metrics[0].scope_metrics[0].metrics.add(name="gen_ai.client.operation.duration", unit="s")
    )
    exponential.exponential_histogram.aggregation_temporality = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
    point = exponential.exponential_histogram.data_points.add(
        start_time_unix_nano=huge.start_time_unix_nano, time_unix_nano=huge.time_unix_nano, scale=0, zero_count=2**31
    )
    point.attributes.add(key="gen_ai.request.model").value.string_value = "model-zero"

    response = post(site, "metrics", request.SerializeToString(), token=source.token)

    assert response.status_code == 200
    partial = ExportMetricsServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_data_points == 2
    assert "less than 2147483648" in partial.error_message
    stored = {r.model: r.samples for r in ObservationRollup.objects.all()}
    assert stored == {"model-0": 1, "model-2": 1}
