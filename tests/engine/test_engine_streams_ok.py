"""A healthy stream of each style is measured completely, plain and TLS."""

import pytest

PHASE_ORDER = ("ttfb_ms", "first_event_ms", "ttft_ms", "ttfat_ms", "total_ms")


@pytest.mark.parametrize("style", ["openai", "responses", "anthropic", "gemini"])
def test_healthy_stream_is_ok_with_every_phase(style, server, probe_url, measure):
    m = measure(probe_url(server, style, tokens=6, reasoning_tokens=2, gap_ms=15), style, server)
    assert m.outcome == "ok", m.error
    assert m.http_status == 200 and m.http_version == "HTTP/1.1"
    assert m.dns_ms is not None and m.connect_ms is not None
    assert (m.tls_ms is not None) == server.base_url.startswith("https")
    values = [getattr(m, f) for f in PHASE_ORDER]
    assert all(v is not None for v in values), values
    assert values == sorted(values), "milestones must come in order"
    assert m.ttft_ms < m.ttfat_ms, "reasoning tokens precede the answer"
    assert m.remote_addr in ("127.0.0.1", "::1")


@pytest.mark.parametrize("style", ["openai", "responses", "anthropic", "gemini"])
def test_output_tokens_come_from_provider_usage(style, server, probe_url, measure):
    m = measure(probe_url(server, style, tokens=7, reasoning_tokens=3), style, server)
    assert (m.output_tokens, m.tokens_estimated) == (10, False)


def test_plain_http_has_phases_but_no_tokens(server, probe_url, measure):
    m = measure(probe_url(server, "http"), "http", server)
    assert m.outcome == "ok" and m.http_status == 200
    assert m.ttfb_ms is not None and m.total_ms >= m.ttfb_ms
    assert (m.ttft_ms, m.first_event_ms, m.output_tokens) == (None, None, None)


def test_literal_ip_has_no_dns_phase(mockllm, measure):
    m = measure(mockllm.base_url.replace("localhost", "127.0.0.1") + "/v1/chat/completions")
    assert m.outcome == "ok"
    assert m.dns_ms is None and m.connect_ms is not None


def test_missing_phases_are_none_never_zero(server, probe_url, measure):
    m = measure(probe_url(server, "http"), "http", server)
    for name, value in m.to_dict().items():
        if name.endswith("_ms"):
            assert value is None or value > 0, name
