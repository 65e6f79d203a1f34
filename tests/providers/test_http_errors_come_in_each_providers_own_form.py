"""429 and 500 answers in each provider's error body (Azure's string codes, OpenRouter's and llama.cpp's
numeric ones, the top-level form of vLLM and Mistral) are http_error with the provider's type and message."""

import pytest

from tests.providers.conftest import CHAT_PRESETS

RATE_LIMIT_TYPES = {
    "azure-openai": "429",
    "mistral": "rate_limited",
    "vllm": "TooManyRequestsError",
    "openrouter": "429",
    "llamacpp": "unavailable_error",
    "ollama": "api_error",
}
SERVER_ERROR_TYPES = {
    "azure-openai": "InternalServerError",
    "mistral": "internal_server_error",
    "vllm": "InternalServerError",
    "openrouter": "500",
    "ollama": "api_error",
    "groq": "internal_server_error",
}


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_rate_limit_is_rate_limited_with_the_providers_type(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault=429, retry_after=11), provider)
    assert (m.outcome, m.http_status, m.retry_after_s) == ("rate_limited", 429, 11)
    assert m.error_type == RATE_LIMIT_TYPES.get(provider, "rate_limit_exceeded")
    assert "Rate limit reached" in m.error and m.ttft_ms is None


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_server_error_is_http_error_with_the_providers_type(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault=500), provider)
    assert (m.outcome, m.http_status) == ("http_error", 500)
    assert m.error_type == SERVER_ERROR_TYPES.get(provider, "server_error")
    assert "The server had an error" in m.error
