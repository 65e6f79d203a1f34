"""Responses API: a response.failed event half way through a 200 stream is
upstream_error, with its code and message, and the phases reached kept."""


def test_failed_event_mid_stream(server, probe_url, measure):
    m = measure(probe_url(server, "responses", fault="error_mid", tokens=6), "responses", server)
    assert (m.outcome, m.http_status) == ("upstream_error", 200)
    assert m.error_type == "server_error"
    assert "The server had an error" in m.error
    assert m.ttfb_ms is not None and m.ttft_ms is not None and m.ttfat_ms is not None
