"""The SDK exports cumulative histograms by default: every export repeats every call since the start. The
receiver stores each export's difference from the last one of its stream, so calls are counted once however
often they are exported (here from an application that exports metrics only: no spans to count them)."""

from __future__ import annotations

import pytest

from probes.histogram import Histogram
from probes.models import MetricStream, Observation, ObservationRollup


def _rollup(target):
    return ObservationRollup.objects.get(target=target)


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_two_exports_of_one_stream_add_only_the_new_calls(site, source, mock_target, instrumented, encoding):
    app = instrumented(
        site, source, encoding=encoding, spans=False, metrics=True, resource={"geo.country.iso_code": "GB"}
    )
    took = [app.chat(tokens=2)[1], app.chat(tokens=2)[1]]
    assert app.reader.force_flush(20_000)
    first = _rollup(mock_target)
    assert (first.samples, Histogram.from_sparse(first.total_hist).count) == (2, 2)

    took.append(app.chat(tokens=2)[1])
    assert app.reader.force_flush(20_000)  # cumulative: this export says 3 calls
    assert app.reader.force_flush(20_000)  # and so does this one, with nothing new
    rollup = _rollup(mock_target)
    assert (rollup.samples, rollup.errors, rollup.country) == (3, 0, "GB")
    total = Histogram.from_sparse(rollup.total_hist)
    assert total.count == 3
    assert Histogram.from_sparse(rollup.ttft_hist).count == 0  # openai-v2 records no time to first chunk
    # A representative value per bucket, narrowed by the point's max: no call took longer than the caller saw it
    # take (within the histogram's 2 %).
    assert 0 < total.percentile(0.5) <= max(took) * 1000 * 1.02
    assert Observation.objects.count() == 0
    assert MetricStream.objects.filter(source=source).count() == 1
