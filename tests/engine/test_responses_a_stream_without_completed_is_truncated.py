"""Responses API: a stream that stops after some deltas, with no
response.completed, is truncated; the phases reached are kept."""


def test_stream_without_completed_is_truncated(server, probe_url, measure):
    m = measure(probe_url(server, "responses", fault="truncate", tokens=6), "responses", server)
    assert m.outcome == "truncated"
    assert "terminal event" in m.error
    assert m.ttft_ms is not None and m.output_tokens == 3 and m.tokens_estimated
