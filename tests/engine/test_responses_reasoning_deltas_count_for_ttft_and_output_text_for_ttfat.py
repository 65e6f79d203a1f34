"""Responses API: a reasoning summary delta is the first token (TTFT); TTFAT
waits for the first response.output_text.delta; usage comes from
response.completed, reasoning tokens included."""

import uuid

from tests.support import mock_log

GAP_MS = 100


def test_reasoning_then_answer(server, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(server, "responses", reasoning_tokens=3, tokens=2, gap_ms=GAP_MS)
    m = measure(url, "responses", server, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    log = mock_log(server, rid)
    for field, key in (("ttft_ms", "first_token_ns"), ("ttfat_ms", "first_answer_ns")):
        sent_ms = (log[key] - m.start_ns) / 1e6
        assert -0.5 < getattr(m, field) - sent_ms < GAP_MS / 2, (field, getattr(m, field), sent_ms)
    assert m.ttfat_ms - m.ttft_ms >= 3 * GAP_MS - 5
    assert (m.output_tokens, m.tokens_estimated) == (5, False)
