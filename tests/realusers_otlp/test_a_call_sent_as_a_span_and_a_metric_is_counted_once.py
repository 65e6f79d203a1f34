"""An application that exports both spans and metrics describes each call twice: as its span and inside the
duration histogram. The span is kept (it has the call's own timing and place); the resource's duration points
are skipped as duplicates, so the rollup counts each call once."""

from __future__ import annotations

from probes.models import MetricStream, Observation, ObservationRollup, SpanResource
from tests.realusers_otlp.conftest import wait_for_rows


def test_the_duration_histogram_of_a_resource_that_sends_spans_adds_nothing(site, source, mock_target, instrumented):
    app = instrumented(site, source, metrics=True)
    app.chat(tokens=2)
    app.chat(tokens=2)
    wait_for_rows(Observation, 2)
    assert app.reader.force_flush(20_000)
    assert MetricStream.objects.filter(source=source).exists()  # the histogram did arrive
    [rollup] = ObservationRollup.objects.filter(target=mock_target)
    assert rollup.samples == 2
    # The spans' resource is remembered; its spans carried no time to first token, so only one key.
    assert SpanResource.objects.filter(source=source).count() == 1
