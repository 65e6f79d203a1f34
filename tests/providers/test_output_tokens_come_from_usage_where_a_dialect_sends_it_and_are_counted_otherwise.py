"""Output tokens equal what the mock generated: read from usage wherever the dialect puts it (a usage-only
chunk, the finish chunk, Groq's x_groq.usage, llama.cpp's timings) and flagged as exact; counted from the
deltas and flagged as estimated when the server sends no usage."""

import pytest

from tests.providers.conftest import CHAT_PRESETS


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_usage_gives_the_exact_count(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, tokens=7, reasoning_tokens=3), provider)
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (10, False)


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_without_usage_the_deltas_are_counted_and_flagged_estimated(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, tokens=7, reasoning_tokens=3, usage=0), provider)
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (10, True)


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_a_capped_answer_is_counted_as_sent(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, tokens=20), provider, max_tokens=4)
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (4, False)
