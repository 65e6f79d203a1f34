"""The engine asks for the stream uncompressed (the first token's bytes are
timed as they come off the wire), and a server that compresses anyway is
still measured right: a gzipped or deflated stream gives the same tokens,
and its TTFT is the arrival of the bytes that held the first token; a
compressed error body is read as text, not junk."""

from __future__ import annotations

import uuid

import pytest

STYLES = ["openai", "responses", "anthropic", "gemini"]
# Tokens this far apart: a TTFT stamped on the wrong read would be off by one.
GAP_MS = 100


@pytest.mark.parametrize("style", [*STYLES, "http"])
def test_the_engine_asks_for_an_uncompressed_answer(style, mockllm, probe_url, measure):
    rid = uuid.uuid4().hex
    m = measure(probe_url(mockllm, style), style, mockllm, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    assert mockllm.log_record(rid)["accept_encoding"] == "identity"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("style", STYLES)
def test_a_stream_compressed_anyway_is_measured_like_a_plain_one(style, encoding, server, probe_url, measure):
    rid = uuid.uuid4().hex
    knobs = {"ttft_ms": 150, "tokens": 5, "reasoning_tokens": 2, "gap_ms": GAP_MS}
    m = measure(probe_url(server, style, encoding=encoding, **knobs), style, server, headers={"x-mock-request-id": rid})
    plain = measure(probe_url(server, style, **knobs), style, server)
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (plain.output_tokens, plain.tokens_estimated) == (7, False)
    log = server.log_record(rid)
    # TTFT is the arrival of the raw chunk whose decoded bytes held the first
    # token: right after the server sent it, one token gap away from any other.
    for field, key in (("ttft_ms", "first_token_ns"), ("ttfat_ms", "first_answer_ns")):
        server_ms = (log[key] - m.start_ns) / 1e6
        assert -0.5 < getattr(m, field) - server_ms < GAP_MS / 2, (field, getattr(m, field), server_ms)
    # Gaps between tokens are the server's pacing, neither squashed nor merged two by two, against the server's
    # own mean gap (a loaded machine stretches the pacing for both).
    server_gap_ms = (log["last_byte_ns"] - log["first_token_ns"]) / 1e6 / (m.output_tokens - 1)
    assert GAP_MS / 2 < m.itl_p50_ms < server_gap_ms * 1.5, (m.itl_p50_ms, server_gap_ms)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("style", STYLES)
def test_a_compressed_error_body_is_read_as_text(style, encoding, mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, style, fault=500, encoding=encoding), style, mockllm)
    assert m.outcome == "http_error" and m.http_status == 500
    assert "The server had an error" in m.error, m.error
    assert m.error_type in ("server_error", "api_error", "INTERNAL")
    text = measure(probe_url(mockllm, style, fault=429, encoding=encoding, error_format="text"), style, mockllm)
    assert text.error == "HTTP 429 Too Many Requests: Rate limit reached for requests"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_plain_http_answer_is_ok(encoding, mockllm, probe_url, measure):
    m = measure(probe_url(mockllm, "http", encoding=encoding, body_bytes=20000), "http", mockllm)
    assert m.outcome == "ok", m.error
    assert m.response_bytes == 20000
