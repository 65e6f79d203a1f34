"""The mock's framing faults inside each dialect (writes cut inside a character or a CRLF, multi-line data,
a gzip stream the probe did not ask for, header lines sent slowly) change nothing the engine reports."""

import pytest

from tests.providers.conftest import CHAT_PRESETS

VARIANTS = [{"split": 1, "crlf": 1}, {"multiline": 1}, {"encoding": "gzip"}]


@pytest.mark.parametrize("variant", VARIANTS, ids=["split-crlf", "multiline", "gzip"])
@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_framing_variants_give_the_same_stream(provider, variant, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, tokens=5, reasoning_tokens=2, **variant), provider)
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (7, False)
    assert m.ttft_ms <= m.ttfat_ms


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_slow_header_lines_count_until_the_headers_are_complete(provider, mockllm, preset_url, measure_preset):
    m = measure_preset(preset_url(mockllm, provider, fault="slow_headers", slow_headers_ms=40, tokens=2), provider)
    assert m.outcome == "ok", m.error
    assert m.ttfb_ms >= 120
