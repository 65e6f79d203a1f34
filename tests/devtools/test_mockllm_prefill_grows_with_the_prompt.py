"""prefill_ms_per_1k adds input_tokens / 1000 * prefill_ms_per_1k ms before the first token, on top of ttft_ms; only
the tokens the prompt cache does not hold pay it. Checked on the server's own stamps, as lower bounds: a sleep only
overshoots, and a busy machine makes every wait longer, never shorter."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.support import mock_log

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
GEMINI = "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse"


def body(path: str, text: str) -> dict:
    if path == GEMINI:
        return {"contents": [{"parts": [{"text": text}]}]}
    return {"model": "m", "stream": True, "max_tokens": 100, "messages": [{"role": "user", "content": text}]}


def serve(server, path: str, text: str, query: str) -> dict:
    rid = uuid.uuid4().hex
    sep = "&" if "?" in path else "?"
    response = httpx.post(
        server.base_url + path + sep + query, json=body(path, text), headers={"x-mock-request-id": rid}, timeout=30
    )
    assert response.status_code == 200
    return mock_log(server, rid)


def waited_ms(record: dict) -> float:
    """The server's wait for the first token, from its first event (the stream's head) to the token."""
    return (record["first_token_ns"] - record["first_event_ns"]) / 1e6


@pytest.mark.parametrize("path", [OPENAI, ANTHROPIC, GEMINI])
def test_a_prompt_of_2000_tokens_waits_its_prefill_on_top_of_ttft(mockllm, path):
    record = serve(mockllm, path, uuid.uuid4().hex + "p" * (8000 - 32), "tokens=2&ttft_ms=50&prefill_ms_per_1k=150")
    assert record["input_tokens"] == 2000
    assert record["prefill_ms"] == 300
    assert record["first_token_delay_ms"] == 350
    if path != GEMINI:  # Gemini's first event is its first token: its wait lies before the headers' write
        assert waited_ms(record) >= 350
    assert (record["first_token_ns"] - record["received_ns"]) / 1e6 >= 350


def test_the_longer_prompt_waits_longer(mockllm):
    short, long = (
        serve(mockllm, OPENAI, uuid.uuid4().hex + "q" * size, "tokens=1&prefill_ms_per_1k=100")
        for size in (400, 12_000)
    )
    assert short["prefill_ms"] == pytest.approx(short["input_tokens"] / 10)
    assert long["prefill_ms"] == pytest.approx(long["input_tokens"] / 10) and long["prefill_ms"] >= 300
    assert waited_ms(long) >= long["prefill_ms"]


def test_without_the_knob_a_long_prompt_pays_nothing(mockllm):
    record = serve(mockllm, OPENAI, "r" * 40_000, "tokens=1")
    assert (record["input_tokens"], record["prefill_ms"], record["first_token_delay_ms"]) == (10_000, 0, 0)


def test_a_whole_answer_also_waits_its_prefill(mockllm):
    rid = uuid.uuid4().hex
    payload = {"model": "m", "messages": [{"role": "user", "content": "s" * 4000}]}
    response = httpx.post(
        mockllm.base_url + OPENAI + "?tokens=1&prefill_ms_per_1k=200", json=payload, headers={"x-mock-request-id": rid}
    )
    assert response.json()["usage"]["prompt_tokens"] == 1000
    record = mock_log(mockllm, rid)
    assert (record["headers_sent_ns"] - record["received_ns"]) / 1e6 >= 200


def test_only_the_uncached_tokens_pay_prefill_and_a_hit_can_take_cache_hit_ms_off(mockllm):
    context = uuid.uuid4().hex + "c" * (8192 - 32)  # 16 blocks: 2,048 tokens the cache keeps
    query = "tokens=1&cache=1&ttft_ms=100&cache_hit_ms=60&prefill_ms_per_1k=100"
    first = serve(mockllm, OPENAI, context + "first", query)
    second = serve(mockllm, OPENAI, context + "again", query)
    assert first["input_tokens"] == second["input_tokens"] == 2050
    assert (first["cached_tokens"], second["cached_tokens"]) == (0, 2048)
    assert first["prefill_ms"] == pytest.approx(205)
    assert second["prefill_ms"] == pytest.approx(0.2)
    assert first["first_token_delay_ms"] == pytest.approx(305)
    assert second["first_token_delay_ms"] == pytest.approx(40.2)
    assert waited_ms(first) >= 305
