"""The official anthropic SDK talks to the mock server as it would to the real API."""

from __future__ import annotations

import ssl

import anthropic
import httpx2  # the anthropic SDK is built on httpx2 and refuses httpx clients
import pytest

MESSAGES = [{"role": "user", "content": "Say hello"}]


def make_client(server) -> anthropic.Anthropic:
    http_client = None
    if server.ca_pem_path:
        http_client = httpx2.Client(verify=ssl.create_default_context(cafile=server.ca_pem_path))
    return anthropic.Anthropic(base_url=server.base_url, api_key="test", max_retries=0, http_client=http_client)


def read_stream(client: anthropic.Anthropic, knobs: dict, max_tokens: int = 1024):
    with client.messages.stream(
        model="claude-mock", max_tokens=max_tokens, messages=MESSAGES, extra_query=knobs
    ) as stream:
        text = "".join(stream.text_stream)
        return text, stream.get_final_message()


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_anthropic_sdk_streams_text_and_final_usage(mockllm, mockllm_tls, tls):
    with make_client(mockllm_tls if tls else mockllm) as client:
        text, message = read_stream(client, {"tokens": 5})
    assert text == "Hello from the mock server"
    assert message.stop_reason == "end_turn"
    assert message.model == "claude-mock"
    assert message.usage.output_tokens == 5
    assert message.usage.input_tokens >= 1
    assert [block.type for block in message.content] == ["text"]


def test_anthropic_sdk_reads_a_signed_thinking_block_before_the_text(mockllm):
    with make_client(mockllm) as client:
        text, message = read_stream(client, {"tokens": 3, "reasoning_tokens": 4})
    thinking, answer = message.content
    assert thinking.type == "thinking"
    assert thinking.thinking == "Let me think about"
    assert thinking.signature.startswith("mocksig-")
    assert answer.text == text == "Hello from the"
    assert message.usage.output_tokens == 7


def test_anthropic_sdk_skips_pings_and_parses_split_crlf_events(mockllm):
    with make_client(mockllm) as client:
        text, message = read_stream(client, {"tokens": 4, "pings": 2, "split": 1, "crlf": 1, "reasoning_tokens": 2})
    assert text == "héllo 日本 naïve café"
    assert message.content[0].thinking == "Hmm ça"
    assert message.usage.output_tokens == 6


def test_max_tokens_caps_the_answer_and_stops_with_max_tokens(mockllm):
    with make_client(mockllm) as client:
        text, message = read_stream(client, {"tokens": 10}, max_tokens=3)
    assert text == "Hello from the"
    assert message.stop_reason == "max_tokens"


def test_anthropic_sdk_reads_a_non_streamed_message(mockllm):
    with make_client(mockllm) as client:
        message = client.messages.create(
            model="claude-mock", max_tokens=100, messages=MESSAGES, extra_query={"tokens": 2, "reasoning_tokens": 1}
        )
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert message.content[1].text == "Hello from"
    assert message.usage.output_tokens == 3


def test_anthropic_sdk_raises_rate_limit_error_with_retry_after(mockllm):
    with make_client(mockllm) as client, pytest.raises(anthropic.RateLimitError) as caught:
        read_stream(client, {"fault": "429", "retry_after": 3})
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.body["error"]["type"] == "rate_limit_error"


def test_anthropic_sdk_raises_on_an_overloaded_event_inside_the_stream(mockllm):
    with make_client(mockllm) as client, pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        read_stream(client, {"tokens": 6, "fault": "error_mid"})
