"""Responses API bad input: non-JSON data is protocol_error, a stalled stream
times out at the deadline, 429 and 500 are http_error with the provider's type."""

DEFAULT_TIMEOUT_MS = 10_000  # the measure fixture's timeout_s, which a call given its own must not wait for


def test_non_json_data_is_protocol_error(server, probe_url, measure):
    m = measure(probe_url(server, "responses", fault="malformed"), "responses", server)
    assert m.outcome == "protocol_error" and "JSON" in m.error
    assert m.ttft_ms is not None


def test_stalled_stream_times_out_with_phases_kept(server, probe_url, measure):
    m = measure(probe_url(server, "responses", fault="stall", tokens=6), "responses", server, timeout_s=0.5)
    # The probe's own deadline ended it: the server holds the stream for 600 s (a stall it ended would read as
    # truncated), and the deadline the call was given, not the measure fixture's default of 10 s, fired.
    assert m.outcome == "timeout"
    assert 500 <= m.total_ms < DEFAULT_TIMEOUT_MS and m.ttft_ms is not None


def test_rate_limit_is_rate_limited_with_retry_after(server, probe_url, measure):
    m = measure(probe_url(server, "responses", fault=429, retry_after=9), "responses", server)
    assert (m.outcome, m.http_status, m.retry_after_s) == ("rate_limited", 429, 9)
    assert m.error_type == "rate_limit_exceeded" and m.ttft_ms is None


def test_server_error_is_http_error(server, probe_url, measure):
    m = measure(probe_url(server, "responses", fault=500), "responses", server)
    assert (m.outcome, m.http_status, m.error_type) == ("http_error", 500, "server_error")


def test_slow_headers_time_out_before_ttfb(server, probe_url, measure):
    url = probe_url(server, "responses", fault="slow_headers", slow_headers_ms=2000)
    m = measure(url, "responses", server, timeout_s=0.3)
    assert m.outcome == "timeout" and m.ttft_ms is None
