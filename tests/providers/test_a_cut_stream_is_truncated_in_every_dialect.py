"""A stream that ends half way, without its finish chunk and [DONE], is truncated in every dialect."""

import pytest

from tests.providers.conftest import CHAT_PRESETS


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_stream_without_its_end_is_truncated(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault="truncate", tokens=6), provider)
    assert (m.outcome, m.http_status) == ("truncated", 200)
    assert m.ttft_ms is not None
    assert (m.output_tokens, m.tokens_estimated) == (3, True)
