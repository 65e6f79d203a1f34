"""Token counts, streaming speed and inter-token gaps."""

import uuid

import pytest

from tests.support import mock_log


@pytest.mark.parametrize("style", ["openai", "gemini"])
def test_without_usage_tokens_are_counted_and_flagged_estimated(style, mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, style, tokens=9, usage=0, gap_ms=2), style)
    assert m.outcome == "ok"
    assert (m.output_tokens, m.tokens_estimated) == (9, True)


def test_tokens_per_second_is_tokens_after_the_first_over_streaming_time(mockllm, probe_url, measure):
    rid = uuid.uuid4().hex
    m = measure(probe_url(mockllm, "openai", tokens=11, gap_ms=20), headers={"x-mock-request-id": rid})
    # 10 tokens after the first, over the time the server took to send them (its pacing is 20 ms a gap,
    # about 50 tokens/s, but a busy machine stretches its sleeps: the server's own stamps are the truth;
    # the last token leaves with the stream's end).
    log = mock_log(mockllm, rid)
    sent_s = (log["last_byte_ns"] - log["first_token_ns"]) / 1e9
    assert m.tokens_per_s == pytest.approx(10 / sent_s, rel=0.1)
    # Gaps are never shorter than the server's pacing (a sleep only overshoots).
    assert m.itl_p50_ms >= 20 - 1
    assert m.itl_p95_ms >= m.itl_p50_ms and m.itl_max_ms >= m.itl_p95_ms


def test_anthropic_usage_is_the_last_cumulative_count(mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, "anthropic", tokens=6, reasoning_tokens=4, gap_ms=1), "anthropic")
    assert (m.output_tokens, m.tokens_estimated) == (10, False)


def test_a_single_token_has_no_speed(mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, "openai", tokens=1))
    assert m.output_tokens == 1
    assert m.tokens_per_s is None and m.itl_p50_ms is None
