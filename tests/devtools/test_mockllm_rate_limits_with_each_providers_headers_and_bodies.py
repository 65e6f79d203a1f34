"""ratelimit_requests and ratelimit_tokens give each API key and model a budget per ratelimit_window_s; a request
beyond it is answered 429 with the provider's body and headers (OpenAI's x-ratelimit-*, Anthropic's
anthropic-ratelimit-*, Gemini's RESOURCE_EXHAUSTED), successful ones carry the headroom left, and the log records
it. fault=429 sends the same headers, its budget spent."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import anthropic
import httpx
import openai
import pytest

from devtools.mockllm.workloads import RateLimiter, openai_duration
from tests.devtools.test_mockllm_anthropic_sdk import make_client as anthropic_client
from tests.devtools.test_mockllm_openai_sdk import make_client as openai_client
from tests.support import mock_log

MESSAGES = [{"role": "user", "content": "Say hello"}]  # 3 input tokens
BUDGET = {"ratelimit_requests": 2, "ratelimit_window_s": 600, "tokens": 2}
GEMINI = "/v1beta/models/gemini-mock:generateContent"


def fresh_key() -> str:
    """Budgets count per API key: a key of its own keeps a test apart from the others on the shared server."""
    return "sk-" + uuid.uuid4().hex


def test_openai_sdk_gets_the_headroom_then_a_rate_limit_error_with_its_headers(mockllm):
    with openai_client(mockllm) as client:
        client.api_key = fresh_key()
        raw = [
            client.chat.completions.with_raw_response.create(model="gpt-mock", messages=MESSAGES, extra_query=BUDGET)
            for _ in range(2)
        ]
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="gpt-mock", messages=MESSAGES, extra_query=BUDGET)
    assert [r.headers["x-ratelimit-remaining-requests"] for r in raw] == ["1", "0"]
    assert all(r.headers["x-ratelimit-limit-requests"] == "2" for r in raw)
    assert "retry-after" not in raw[0].headers
    headers = caught.value.response.headers
    assert (headers["x-ratelimit-limit-requests"], headers["x-ratelimit-remaining-requests"]) == ("2", "0")
    assert re.fullmatch(r"\d+m[\d.]+s", headers["x-ratelimit-reset-requests"])  # some 10 minutes left
    assert 1 <= int(headers["retry-after"]) <= 600
    assert "x-ratelimit-remaining-tokens" not in headers  # no token budget was set
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.body["type"] == "requests"


def test_another_key_or_model_has_a_budget_of_its_own(mockllm):
    key = fresh_key()
    url = mockllm.base_url + "/v1/chat/completions"
    query = "?ratelimit_requests=1&ratelimit_window_s=600&tokens=1"

    def status(key: str, model: str) -> int:
        body = {"model": model, "messages": MESSAGES}
        return httpx.post(url + query, json=body, headers={"authorization": f"Bearer {key}"}).status_code

    assert [status(key, "a"), status(key, "a"), status(key, "b"), status(fresh_key(), "a")] == [200, 429, 200, 200]


def test_a_token_budget_counts_input_and_output_and_says_tokens(mockllm):
    key = fresh_key()
    knobs = {"ratelimit_tokens": 12, "ratelimit_requests": 100, "ratelimit_window_s": 600, "tokens": 2}
    ids = [uuid.uuid4().hex for _ in range(3)]
    with openai_client(mockllm) as client:
        client.api_key = key
        ok = [
            client.chat.completions.with_raw_response.create(
                model="gpt-mock", messages=MESSAGES, extra_query=knobs, extra_headers={"x-mock-request-id": rid}
            )
            for rid in ids[:2]
        ]
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(
                model="gpt-mock", messages=MESSAGES, extra_query=knobs, extra_headers={"x-mock-request-id": ids[2]}
            )
    # Each request costs 3 input + 2 output tokens: 12 leaves 7, then 2, and a third does not fit.
    assert [r.headers["x-ratelimit-remaining-tokens"] for r in ok] == ["7", "2"]
    assert [r.headers["x-ratelimit-remaining-requests"] for r in ok] == ["99", "98"]
    headers = caught.value.response.headers
    assert (headers["x-ratelimit-limit-tokens"], headers["x-ratelimit-remaining-tokens"]) == ("12", "2")
    assert caught.value.body["type"] == "tokens"
    records = [mock_log(mockllm, rid) for rid in ids]
    assert [(r["status"], r["ratelimit_remaining_tokens"], r["ratelimit_remaining_requests"]) for r in records] == [
        (200, 7, 99),
        (200, 2, 98),
        (429, 2, 98),
    ]


def test_anthropic_sdk_gets_its_own_headers_and_rate_limit_error(mockllm):
    with anthropic_client(mockllm) as client:
        client.api_key = fresh_key()
        knobs = {**BUDGET, "ratelimit_tokens": 1000}
        ok = client.messages.with_raw_response.create(
            model="claude-mock", max_tokens=100, messages=MESSAGES, extra_query=knobs
        )
        client.messages.create(model="claude-mock", max_tokens=100, messages=MESSAGES, extra_query=knobs)
        with pytest.raises(anthropic.RateLimitError) as caught:
            client.messages.create(model="claude-mock", max_tokens=100, messages=MESSAGES, extra_query=knobs)
    assert ok.headers["anthropic-ratelimit-requests-limit"] == "2"
    assert ok.headers["anthropic-ratelimit-requests-remaining"] == "1"
    assert ok.headers["anthropic-ratelimit-tokens-remaining"] == "995"
    headers = caught.value.response.headers
    assert headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert headers["anthropic-ratelimit-tokens-remaining"] == "990"
    reset = datetime.strptime(headers["anthropic-ratelimit-requests-reset"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert 0 < (reset - datetime.now(UTC)).total_seconds() <= 601
    assert int(headers["retry-after"]) >= 1
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": caught.value.body["error"]["message"]},
    }


def test_gemini_answers_resource_exhausted_with_its_retry_info(mockllm):
    headers = {"x-goog-api-key": fresh_key()}
    url = mockllm.base_url + GEMINI + "?ratelimit_requests=1&ratelimit_window_s=600"
    body = {"contents": [{"parts": [{"text": "hi"}]}]}
    ok, refused = (httpx.post(url, json=body, headers=headers) for _ in range(2))
    assert ok.status_code == 200 and not any(h.startswith("x-ratelimit") for h in ok.headers)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert (error["code"], error["status"]) == (429, "RESOURCE_EXHAUSTED")
    retry = next(d for d in error["details"] if d["@type"].endswith("RetryInfo"))
    assert retry["retryDelay"] == refused.headers["retry-after"] + "s"


def test_a_streamed_answer_carries_the_headroom_in_its_headers(mockllm):
    url = mockllm.base_url + "/v1/responses?ratelimit_requests=5&ratelimit_window_s=600&tokens=2"
    body = {"model": "m", "input": "hi", "stream": True}
    with httpx.stream("POST", url, json=body, headers={"authorization": "Bearer " + fresh_key()}) as response:
        assert response.headers["x-ratelimit-remaining-requests"] == "4"
        assert "response.completed" in response.read().decode()


@pytest.mark.parametrize(
    ("path", "header"),
    [
        ("/v1/chat/completions", "x-ratelimit-remaining-requests"),
        ("/v1/responses", "x-ratelimit-remaining-requests"),
        ("/v1/messages", "anthropic-ratelimit-requests-remaining"),
    ],
)
def test_fault_429_sends_the_providers_headers_too(mockllm, path, header):
    response = httpx.post(mockllm.base_url + path + "?fault=429&retry_after=4", json={"model": "m"})
    assert response.status_code == 429
    assert (response.headers[header], response.headers["retry-after"]) == ("0", "4")


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_the_budget_comes_back_when_its_window_ends():
    clock = FakeClock()
    limiter = RateLimiter(clock=clock)
    knobs = {"ratelimit_requests": 2, "ratelimit_tokens": 0, "ratelimit_window_s": 60}
    rooms = [limiter.admit(("k", "m"), knobs, cost=10) for _ in range(3)]
    assert [(r.requests_remaining, r.exceeded) for r in rooms] == [(1, None), (0, None), (0, "requests")]
    clock.now += 59.5
    refused = limiter.admit(("k", "m"), knobs, cost=10)
    assert refused.exceeded == "requests" and refused.reset_s == pytest.approx(0.5) and refused.retry_after == 1
    clock.now += 0.5
    assert limiter.admit(("k", "m"), knobs, cost=10).requests_remaining == 1
    assert limiter.admit(("k", "m"), {**knobs, "ratelimit_requests": 0}, cost=10) is None  # no budget: no headroom


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.02, "20ms"), (1, "1s"), (8.64, "8.64s"), (360, "6m0s"), (3723, "1h2m3s")]
)
def test_openai_reset_durations_read_like_openais(seconds, text):
    assert openai_duration(seconds) == text
