"""A stream that stops sending half way times out at the probe's deadline, with the phases reached kept."""

import pytest

from tests.providers.conftest import CHAT_PRESETS


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_stalled_stream_times_out_at_the_deadline(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault="stall", tokens=6), provider, timeout_s=0.5)
    assert m.outcome == "timeout"
    assert 500 <= m.total_ms < 1000
    assert m.ttft_ms is not None and m.ttfat_ms is not None
