"""A stream that stops sending half way times out at the probe's deadline, with the phases reached kept."""

import pytest

from tests.providers.conftest import CHAT_PRESETS

DEFAULT_TIMEOUT_MS = 10_000  # the measure fixture's timeout_s, which a call given its own must not wait for


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_stalled_stream_times_out_at_the_deadline(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault="stall", tokens=6), provider, timeout_s=0.5)
    # The probe's own deadline ended it: the server holds the stream for 600 s (a stall it ended would read as
    # truncated), and the deadline the call was given, not the measure fixture's default of 10 s, fired.
    assert m.outcome == "timeout"
    assert 500 <= m.total_ms < DEFAULT_TIMEOUT_MS
    assert m.ttft_ms is not None and m.ttfat_ms is not None
