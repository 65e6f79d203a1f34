"""Each chat preset's probe of its own dialect is ok, with TTFB, first event, TTFT, TTFAT and total where the
mock's log says it sent them: comments, Azure's filter chunk and role-only chunks move none of them."""

import uuid

import pytest

from tests.engine.test_engine_ttft_rules import NEXT_TOKEN_MS, assert_stamped_at
from tests.providers.conftest import CHAT_PRESETS
from tests.support import mock_log

MILESTONES = (
    ("ttfb_ms", "headers_sent_ns"),
    ("first_event_ms", "first_event_ns"),
    ("ttft_ms", "first_token_ns"),
    ("ttfat_ms", "first_answer_ns"),
    ("total_ms", "last_byte_ns"),
)


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_a_presets_milestones_match_the_mocks_send_times(provider, mockllm, preset_url, measure_preset):
    rid = uuid.uuid4().hex
    url = preset_url(
        mockllm, provider, ttft_ms=NEXT_TOKEN_MS, reasoning_tokens=2, tokens=4, gap_ms=NEXT_TOKEN_MS, pings=2
    )
    m = measure_preset(url, provider, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    log = mock_log(mockllm, rid)
    assert log["provider"] == provider
    for field, key in MILESTONES:
        assert_stamped_at(getattr(m, field), log[key], m.start_ns)
    # Two reasoning tokens, each a gap apart, come before the answer.
    assert m.ttfat_ms - m.ttft_ms >= 2 * NEXT_TOKEN_MS - 5


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_keep_alive_comments_before_the_first_chunk_are_not_the_first_event(
    provider, mockllm, preset_url, measure_preset
):
    m = measure_preset(preset_url(mockllm, provider, ttft_ms=150, pings=3, tokens=3), provider)
    assert m.outcome == "ok", m.error
    assert m.ttft_ms >= 150, "comments, filter and role chunks went out at once: no token before 150 ms"
    if provider in ("deepseek", "openrouter", "ollama"):
        # Comments only until the first token: the first event comes with it.
        assert m.first_event_ms >= 150
    else:
        assert m.first_event_ms < m.ttft_ms


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_every_dialect_is_read_the_same_over_http2(provider, mockllm_h2, preset_url, measure_preset):
    m = measure_preset(
        preset_url(mockllm_h2, provider, tokens=5, reasoning_tokens=1), provider, mockllm_h2, http_version="2"
    )
    assert (m.outcome, m.http_version) == ("ok", "HTTP/2"), m.error
    assert (m.output_tokens, m.tokens_estimated) == (6, False)
