"""Every failure is classified, keeps the phases reached, and names no secret."""

import socket

import pytest

DEFAULT_TIMEOUT_MS = 10_000  # the measure fixture's timeout_s, which a call given its own must not wait for

STYLES = ["openai", "responses", "anthropic", "gemini"]


def test_unresolvable_host_is_dns_error(measure):
    m = measure("http://no-such-host.invalid/v1/chat/completions")
    assert m.outcome == "dns_error"
    assert m.connect_ms is None and m.total_ms is not None


def test_refused_port_is_connect_error(measure):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connections are refused
        m = measure(f"http://127.0.0.1:{port}/v1/chat/completions")
    assert m.outcome == "connect_error"
    assert "refused" in m.error


def test_untrusted_certificate_is_tls_error(mockllm_tls, probe_url, measure):
    m = measure(probe_url(mockllm_tls, "openai"))  # no ca_bundle: the mock's CA is not trusted
    assert m.outcome == "tls_error"
    assert "certificate" in m.error
    assert m.connect_ms is not None and m.tls_ms is None


@pytest.mark.parametrize("style", STYLES)
def test_a_429_is_rate_limited_with_retry_after_type_and_headroom(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault=429, retry_after=12), style, server)
    assert m.outcome == "rate_limited" and m.http_status == 429
    assert m.retry_after_s == 12
    # The headroom headers OpenAI's and Anthropic's styles send (Gemini sends none).
    assert m.ratelimit_remaining_requests == (None if style == "gemini" else 0)
    assert m.error_type in ("rate_limit_exceeded", "rate_limit_error", "RESOURCE_EXHAUSTED")
    assert m.ttfb_ms is not None and m.ttft_ms is None


@pytest.mark.parametrize("style", STYLES)
def test_server_error_is_http_error(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault=500), style, server)
    assert (m.outcome, m.http_status) == ("http_error", 500)
    assert m.error_type in ("server_error", "api_error", "INTERNAL")


@pytest.mark.parametrize("style", STYLES)
def test_error_event_inside_a_200_stream_is_upstream_error(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault="error_mid", tokens=6), style, server)
    # Anthropic's mid-stream error is its overloaded_error: the provider's load, kept apart.
    assert m.outcome == ("overloaded" if m.error_type == "overloaded_error" else "upstream_error")
    assert m.http_status == 200
    assert m.ttft_ms is not None, "phases reached before the failure are kept"
    assert m.error_type in ("server_error", "overloaded_error", "UNAVAILABLE")


@pytest.mark.parametrize("style", STYLES)
def test_stream_without_terminal_event_is_truncated(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault="truncate", tokens=6), style, server)
    assert m.outcome == "truncated"
    assert m.ttft_ms is not None


@pytest.mark.parametrize("style", STYLES)
def test_non_json_data_is_protocol_error(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault="malformed"), style, server)
    assert m.outcome == "protocol_error"
    assert "JSON" in m.error
    assert m.ttft_ms is not None


@pytest.mark.parametrize("style", STYLES)
def test_stalled_stream_times_out_at_the_deadline(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault="stall", tokens=6), style, server, timeout_s=0.5)
    # The probe's own deadline ended it: the server holds the stream for 600 s (a stall it ended would read as
    # truncated), and the deadline the call was given, not the measure fixture's default of 10 s, fired.
    assert m.outcome == "timeout"
    assert 500 <= m.total_ms < DEFAULT_TIMEOUT_MS
    assert m.ttft_ms is not None


def test_slow_headers_time_out_before_ttfb(server, probe_url, measure):
    m = measure(probe_url(server, "openai", headers_delay_ms=2000), "openai", server, timeout_s=0.3)
    assert m.outcome == "timeout" and m.ttfb_ms is None
    assert "waiting for response headers" in m.error


def test_slow_header_lines_count_until_headers_are_complete(server, probe_url, measure):
    m = measure(probe_url(server, "openai", fault="slow_headers", slow_headers_ms=40), "openai", server)
    assert m.outcome == "ok"
    # Several header lines, each 40 ms apart: TTFB is when the last arrived.
    assert m.ttfb_ms >= 120


def test_oversized_response_is_protocol_error(server, probe_url, measure):
    m = measure(probe_url(server, "openai", tokens=400), "openai", server, max_response_bytes=4096)
    assert m.outcome == "protocol_error" and "larger than" in m.error


def test_json_answer_where_a_stream_was_expected_is_protocol_error(server, probe_url, measure):
    # /health answers 200 application/json: not the stream an LLM style needs.
    m = measure(probe_url(server, "http"), "openai", server)
    assert m.outcome == "protocol_error" and "text/event-stream" in m.error


@pytest.mark.parametrize("style", STYLES)
def test_an_overloaded_provider_is_overloaded_not_an_http_error(style, server, probe_url, measure):
    m = measure(probe_url(server, style, fault="overloaded"), style, server)
    # Anthropic's 529 overloaded_error; the others' 503 saying overloaded.
    assert (m.outcome, m.http_status) == ("overloaded", 529 if style == "anthropic" else 503), m.error
    assert m.ttft_ms is None
