"""Responses API: a response capped by max_output_tokens ends with
response.incomplete. Like finish_reason "length" in chat completions, the
stream was delivered whole and measured: ok, with the usage it reports."""

import uuid


def test_incomplete_is_ok_with_its_usage(server, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(server, "responses", tokens=8)
    m = measure(url, "responses", server, max_tokens=3, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (3, False)
    assert m.ttft_ms is not None and m.total_ms is not None
