"""Over HTTP/2 the engine times the same phases as over HTTP/1.1: DNS,
connect and TLS, TTFB at the HEADERS frame, TTFT at the DATA frame holding
the first token, and stores the negotiated version."""

import uuid

import pytest

from tests.engine.test_engine_ttft_rules import NEXT_TOKEN_MS, assert_stamped_at
from tests.support import mock_log


@pytest.mark.parametrize("style", ["openai", "anthropic", "gemini"])
def test_http2_milestones_match_the_mocks_frame_send_times(style, mockllm_h2, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(mockllm_h2, style, headers_delay_ms=40, ttft_ms=NEXT_TOKEN_MS, tokens=5, gap_ms=NEXT_TOKEN_MS)
    m = measure(url, style, mockllm_h2, http_version="2", headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    assert m.http_version == "HTTP/2" and m.error is None
    assert None not in (m.dns_ms, m.connect_ms, m.tls_ms)
    log = mock_log(mockllm_h2, rid)
    for field, key in (("ttfb_ms", "headers_sent_ns"), ("ttft_ms", "first_token_ns"), ("total_ms", "last_byte_ns")):
        assert_stamped_at(getattr(m, field), log[key], m.start_ns)
    assert m.output_tokens == 5 and m.tokens_estimated is False


def test_http2_only_is_measured_over_http2_when_the_server_offers_it(mockllm_h2, probe_url, measure):
    m = measure(probe_url(mockllm_h2, "openai", tokens=3), "openai", mockllm_h2, http_version="2-only")
    assert (m.outcome, m.http_version, m.error) == ("ok", "HTTP/2", None)


def test_the_default_stays_http11_even_where_h2_is_offered(mockllm_h2, probe_url, measure):
    m = measure(probe_url(mockllm_h2, "openai", tokens=3), "openai", mockllm_h2)
    assert (m.outcome, m.http_version) == ("ok", "HTTP/1.1")
