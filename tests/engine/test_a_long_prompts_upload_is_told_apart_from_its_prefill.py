"""request_sent_ms is when the request's last byte was written: for a 400 KB prompt (about 100,000 tokens), after
the connection and before the answer's head, which the server sent only once it had the whole body (its own
stamp); and the wait from it to the first token holds at least the prefill the server spent on those tokens."""

from __future__ import annotations

import uuid

import pytest

STYLES = ["openai", "responses", "anthropic", "gemini"]
LONG = 100_000 * 4  # characters: the mock counts a token per four


@pytest.mark.parametrize("style", STYLES)
def test_the_upload_ends_before_the_answer_and_the_prefill_follows_it(style, server, probe_url, measure):
    rid = uuid.uuid4().hex
    prompt = (uuid.uuid4().hex + " ") + "x" * LONG
    url = probe_url(server, style, prefill_ms_per_1k=2, tokens=4)
    m = measure(url, style, server, prompt=prompt, timeout_s=60.0, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    rec = server.log_record(rid)
    assert rec["input_tokens"] >= 100_000
    assert m.input_tokens == rec["input_tokens"]
    reached = max(v for v in (m.dns_ms, m.connect_ms, m.tls_ms) if v is not None) if m.connect_ms else 0.0
    assert reached <= m.request_sent_ms <= m.ttfb_ms <= m.ttft_ms
    # The server had the whole body before the answer's head reached us (one monotonic clock for both).
    assert rec["body_received_ns"] <= m.start_ns + m.ttfb_ms * 1e6
    # The prefill came after the upload, within the wait for the first token.
    assert m.ttft_ms - m.request_sent_ms >= rec["prefill_ms"] > 0


def test_a_short_prompt_has_its_request_sent_too(mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, "openai"))
    assert m.outcome == "ok"
    assert m.connect_ms <= m.request_sent_ms <= m.ttfb_ms
