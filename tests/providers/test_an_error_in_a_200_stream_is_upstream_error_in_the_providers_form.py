"""A failure half way through an HTTP 200 stream, written as each provider writes it (OpenAI's error object,
OpenRouter's error chunk with finish_reason "error" and a numeric code, the top-level {"object": "error"}
of vLLM and Mistral, llama.cpp's), is upstream_error with the provider's type and message, phases kept."""

import pytest

from tests.providers.conftest import CHAT_PRESETS, KEY

ERROR_TYPES = {"openrouter": "502", "mistral": "internal_server_error", "vllm": "InternalServerError"}
MESSAGES = {"openrouter": "Provider returned error"}


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_error_mid_stream_is_upstream_error_with_phases_kept(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault="error_mid", tokens=6, reasoning_tokens=1), provider)
    assert (m.outcome, m.http_status) == ("upstream_error", 200)
    assert m.error_type == ERROR_TYPES.get(provider, "server_error")
    assert MESSAGES.get(provider, "The server had an error") in m.error
    assert None not in (m.ttfb_ms, m.first_event_ms, m.ttft_ms, m.ttfat_ms, m.total_ms)
    # Three answer tokens and the reasoning one arrived before the failure.
    assert (m.output_tokens, m.tokens_estimated) == (4, True)


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_an_echoed_key_in_the_error_never_reaches_the_measurement(provider, mockllm, preset_url, measure_preset):
    for fault in ("error_mid", "500"):
        m = measure_preset(preset_url(mockllm, provider, fault=fault, echo_key="raw"), provider)
        assert m.outcome in ("upstream_error", "http_error")
        assert KEY not in str(m.to_dict())
