"""The official openai SDK talks to the mock server as it would to the real API."""

from __future__ import annotations

import ssl

import httpx2  # the openai SDK is built on httpx2 and refuses httpx clients
import openai
import pytest

MESSAGES = [{"role": "user", "content": "Say hello"}]


def make_client(server) -> openai.OpenAI:
    http_client = None
    if server.ca_pem_path:
        http_client = httpx2.Client(verify=ssl.create_default_context(cafile=server.ca_pem_path))
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0, http_client=http_client)


def read_stream(client: openai.OpenAI, knobs: dict, **kwargs) -> tuple[str, str, list]:
    stream = client.chat.completions.create(
        model="gpt-mock",
        messages=MESSAGES,
        stream=True,
        stream_options={"include_usage": True},
        extra_query=knobs,
        **kwargs,
    )
    content, reasoning, chunks = "", "", []
    for chunk in stream:
        chunks.append(chunk)
        for choice in chunk.choices:
            content += choice.delta.content or ""
            reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
    return content, reasoning, chunks


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_openai_sdk_reads_stream_with_usage(mockllm, mockllm_tls, tls):
    server = mockllm_tls if tls else mockllm
    assert server.base_url.startswith("https://localhost:" if tls else "http://127.0.0.1:")
    with make_client(server) as client:
        content, _, chunks = read_stream(client, {"tokens": 5})
    assert content == "Hello from the mock server"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    usage = chunks[-1].usage
    assert chunks[-1].choices == []
    assert (usage.prompt_tokens, usage.completion_tokens) == (usage.total_tokens - 5, 5)
    assert usage.completion_tokens_details.reasoning_tokens == 0


def test_openai_sdk_reads_reasoning_before_the_answer_and_counts_it_in_usage(mockllm):
    with make_client(mockllm) as client:
        content, reasoning, chunks = read_stream(client, {"tokens": 3, "reasoning_tokens": 4})
    assert reasoning == "Let me think about"
    assert content == "Hello from the"
    assert chunks[-1].usage.completion_tokens == 7
    assert chunks[-1].usage.completion_tokens_details.reasoning_tokens == 4


def test_openai_sdk_omits_usage_when_the_request_does_not_ask_for_it(mockllm):
    with make_client(mockllm) as client:
        stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True, extra_query={"tokens": 2})
        chunks = list(stream)
    assert all(chunk.usage is None and chunk.choices for chunk in chunks)


def test_openai_sdk_is_not_fooled_by_keep_alives_and_empty_deltas(mockllm):
    with make_client(mockllm) as client:
        content, _, chunks = read_stream(client, {"tokens": 4, "pings": 3, "ttft_ms": 30})
    assert content == "Hello from the mock"
    assert chunks[-1].usage.completion_tokens == 4


def test_openai_sdk_parses_split_crlf_multiline_events(mockllm):
    with make_client(mockllm) as client:
        content, _, chunks = read_stream(client, {"tokens": 5, "split": 1, "crlf": 1, "multiline": 1})
    assert content == "héllo 日本 naïve café 🚀"
    assert chunks[-1].usage.completion_tokens == 5


def test_openai_sdk_reads_a_non_streamed_completion(mockllm):
    with make_client(mockllm) as client:
        completion = client.chat.completions.create(model="gpt-mock", messages=MESSAGES, extra_query={"tokens": 3})
    assert completion.choices[0].message.content == "Hello from the"
    assert completion.model == "gpt-mock"
    assert completion.usage.completion_tokens == 3


def test_max_completion_tokens_caps_the_answer_and_finishes_with_length(mockllm):
    with make_client(mockllm) as client:
        content, _, chunks = read_stream(client, {"tokens": 10}, max_completion_tokens=2)
    assert content == "Hello from"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"


def test_openai_sdk_raises_rate_limit_error_with_retry_after(mockllm):
    with make_client(mockllm) as client, pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="m", messages=MESSAGES, stream=True, extra_query={"fault": "429"})
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.code == "rate_limit_exceeded"


def test_openai_sdk_raises_on_an_error_event_inside_the_stream(mockllm):
    with make_client(mockllm) as client, pytest.raises(openai.APIError, match="server had an error"):
        read_stream(client, {"tokens": 6, "fault": "error_mid"})
