"""Each API style stores the input, cached and cache-write token counts as the mock server counted them (its own
log record), from each provider's own usage fields: a first call with a long shared prompt fills the mock's prompt
cache, the second reads it; and a budget of requests shows as headroom that falls by one a call."""

from __future__ import annotations

import uuid

import pytest

STYLES = ["openai", "responses", "anthropic", "gemini"]

# Over the mock's minimum cacheable prefix (cache_min_tokens, 1024 tokens of four characters).
PROMPT = "Summarise the status of the regions. " * 160


@pytest.mark.parametrize("style", STYLES)
def test_the_second_call_reads_the_prompt_cache_the_first_filled(style, server, probe_url, measure):
    url = probe_url(server, style, cache=1, tokens=4)
    # Its own first words: no earlier test's prompt shares its prefix.
    prompt = f"{uuid.uuid4().hex} {PROMPT}"
    rids = [uuid.uuid4().hex for _ in range(2)]
    first, second = (measure(url, style, server, prompt=prompt, headers={"x-mock-request-id": rid}) for rid in rids)
    for m in (first, second):
        assert m.outcome == "ok", m.error
    logged = [server.log_record(rid) for rid in rids]
    assert [m.input_tokens for m in (first, second)] == [rec["input_tokens"] for rec in logged]
    assert first.input_tokens > 1024
    assert first.cached_input_tokens in (None, 0)
    assert second.cached_input_tokens == logged[1]["cached_tokens"] > 0
    if style == "anthropic":
        # Anthropic alone reports what a call wrote to the cache.
        assert first.cache_write_tokens == logged[0]["cache_write_tokens"] > 0


@pytest.mark.parametrize("style", [s for s in STYLES if s != "gemini"])
def test_headroom_falls_by_one_request_a_call(style, server, probe_url, measure):
    url = probe_url(server, style, ratelimit_requests=50, ratelimit_window_s=3600)
    rids = [uuid.uuid4().hex for _ in range(3)]
    calls = [measure(url, style, server, headers={"x-mock-request-id": rid}) for rid in rids]
    remaining = [m.ratelimit_remaining_requests for m in calls]
    logged = [server.log_record(rid)["ratelimit_remaining_requests"] for rid in rids]
    assert remaining == logged
    assert remaining[0] - remaining[2] == 2
