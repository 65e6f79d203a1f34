"""Data that is not JSON, in the middle of any dialect's stream, is protocol_error with the phases reached."""

import pytest

from tests.providers.conftest import CHAT_PRESETS


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_non_json_data_is_protocol_error(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault="malformed", tokens=4), provider)
    assert (m.outcome, m.http_status) == ("protocol_error", 200)
    assert "JSON" in m.error
    assert m.ttft_ms is not None and m.ttfat_ms is not None
