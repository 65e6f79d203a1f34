"""A server that refuses h2 (ALPN picks http/1.1): http_version 2 falls back
to HTTP/1.1 and stores why; 2-only fails, classified, before any request."""

import urllib.error
import uuid

import pytest

from tests.support import mock_log


def test_http2_falls_back_to_http11_with_the_reason_stored(mockllm_tls, probe_url, measure):
    m = measure(probe_url(mockllm_tls, "openai", tokens=3), "openai", mockllm_tls, http_version="2")
    assert (m.outcome, m.http_version) == ("ok", "HTTP/1.1")
    assert m.error == "asked for HTTP/2, measured over HTTP/1.1: the server refused HTTP/2 (ALPN chose http/1.1)"
    assert m.ttft_ms is not None and m.output_tokens == 3


def test_http2_only_fails_as_protocol_error_and_sends_nothing(mockllm_tls, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(mockllm_tls, "openai", tokens=3)
    m = measure(url, "openai", mockllm_tls, http_version="2-only", headers={"x-mock-request-id": rid})
    assert m.outcome == "protocol_error"
    assert "refused HTTP/2: ALPN chose http/1.1" in m.error and "2-only" in m.error
    # The handshake was timed; no request went out, so no response phase exists.
    assert m.tls_ms is not None and (m.ttfb_ms, m.http_version, m.http_status) == (None, None, None)
    with pytest.raises(urllib.error.HTTPError):
        mock_log(mockllm_tls, rid)


def test_http2_over_plain_http_falls_back_saying_h2_needs_tls(mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, "openai", tokens=2), "openai", mockllm, http_version="2")
    assert (m.outcome, m.http_version) == ("ok", "HTTP/1.1")
    assert "only negotiated over TLS" in m.error


def test_http2_only_over_plain_http_is_a_configuration_error(mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, "openai"), "openai", mockllm, http_version="2-only")
    assert m.outcome == "config_error"
    assert m.error.startswith("http_version:") and "https://" in m.error
