"""An application whose spans carry no time to first token (openai-v2 2.4b0) may still record one as a metric,
as LiteLLM does (here the application records gen_ai.client.operation.time_to_first_chunk itself). Its calls
are counted once, from the spans (the duration histogram of the same resource is skipped), and the TTFT
histogram adds its values to the same rollup without adding calls."""

from __future__ import annotations

import time

from probes.histogram import Histogram
from probes.models import Observation, ObservationRollup
from tests.realusers_otlp.conftest import wait_for_rows


def test_ttft_values_from_metrics_join_the_calls_counted_from_spans(site, source, mock_target, instrumented):
    app = instrumented(site, source, metrics=True)
    ttft = app.meter_provider.get_meter("chat-app").create_histogram(
        "gen_ai.client.operation.time_to_first_chunk", unit="s"
    )
    for _ in range(2):
        started = time.perf_counter()
        stream = app.client.chat.completions.create(
            model="mock-model",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            extra_query={"ttft_ms": 200, "tokens": 3},
        )
        recorded = False
        for chunk in stream:
            # The first chunk with text (the mock's first one carries only the role, at once).
            if not recorded and chunk.choices and chunk.choices[0].delta.content:
                recorded = True
                ttft.record(
                    time.perf_counter() - started,
                    {"gen_ai.request.model": "mock-model", "gen_ai.provider.name": "openai",
                     "gen_ai.operation.name": "chat"},
                )  # fmt: skip
    wait_for_rows(Observation, 2)
    assert app.reader.force_flush(20_000)

    rollup = ObservationRollup.objects.get(target=mock_target)
    assert rollup.samples == 2  # the spans; the duration histogram was skipped
    assert Histogram.from_sparse(rollup.total_hist).count == 2
    ttft_values = Histogram.from_sparse(rollup.ttft_hist)
    assert ttft_values.count == 2
    # The SDK's default bounds (0, 5, 10, ...) put both values in (0, 5] seconds: the point's min and max narrow
    # that bucket to the values themselves, so its representative is at least the mock's 200 ms.
    assert ttft_values.percentile(0.5) >= 200 * 0.98
