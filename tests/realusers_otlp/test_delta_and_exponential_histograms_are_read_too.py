"""Exporters configured for DELTA temporality and exponential histograms (the SDK's
ExponentialBucketHistogramAggregation) are read as well: each delta point is taken as it is, each exponential
bucket's calls at the bucket's geometric midpoint, within the point's min and max."""

from __future__ import annotations

from opentelemetry.sdk.metrics import Histogram as HistogramInstrument
from opentelemetry.sdk.metrics.export import AggregationTemporality
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation

from probes.histogram import Histogram
from probes.models import MetricStream, ObservationRollup


def test_delta_exponential_points_add_their_calls(site, source, mock_target, instrumented):
    app = instrumented(
        site,
        source,
        spans=False,
        metrics=True,
        metric_options={
            "preferred_temporality": {HistogramInstrument: AggregationTemporality.DELTA},
            "preferred_aggregation": {HistogramInstrument: ExponentialBucketHistogramAggregation()},
        },
    )
    _, first = app.chat(ttft_ms=300, tokens=2)
    _, second = app.chat(ttft_ms=300, tokens=2)
    assert app.reader.force_flush(20_000)
    _, third = app.chat(ttft_ms=300, tokens=2)
    assert app.reader.force_flush(20_000)

    rollup = ObservationRollup.objects.get(target=mock_target)
    assert rollup.samples == 3
    total = Histogram.from_sparse(rollup.total_hist)
    assert total.count == 3
    # Each call took at least the mock's 300 ms and at most what the test measured around it.
    assert total.percentile(0.0) >= 300 * 0.98 and total.percentile(1.0) <= max(first, second, third) * 1000 * 1.02
    assert not MetricStream.objects.exists()  # delta points need no stream state
