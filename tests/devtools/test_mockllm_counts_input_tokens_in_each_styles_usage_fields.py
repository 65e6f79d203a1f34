"""The mock counts a request's input tokens from its prompt text (system prompt and messages, ceil(characters / 4))
and reports them where each API style does: chat completions' prompt_tokens, Responses' and Anthropic's
input_tokens (in message_start and message_delta), Gemini's promptTokenCount; its log records the same count."""

from __future__ import annotations

import json
import math
import uuid

import httpx
import pytest

from devtools.mockllm.workloads import count_tokens, prompt_text
from tests.devtools.test_mockllm_anthropic_sdk import make_client as anthropic_client
from tests.devtools.test_mockllm_openai_sdk import make_client as openai_client
from tests.support import mock_log

SYSTEM = "You are terse."
QUESTION = "Say hello in five words, please."
ANSWER = "Hello there."
# The prompt text is the texts in order, joined by newlines.
TEXT = "\n".join([SYSTEM, QUESTION, ANSWER, QUESTION])
TOKENS = math.ceil(len(TEXT) / 4)


def data_lines(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_the_prompt_text_is_every_text_part_in_order_and_tokens_are_a_quarter_of_its_characters():
    chat = {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": [{"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {}}]},
            {"role": "assistant", "content": ANSWER},
            {"role": "user", "content": QUESTION},
        ]
    }
    gemini = {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": r, "parts": [{"text": t}]} for r, t in (("user", QUESTION), ("model", ANSWER))]
        + [{"role": "user", "parts": [{"text": QUESTION}]}],
    }
    responses = {"instructions": SYSTEM, "input": [{"role": "user", "content": QUESTION}, ANSWER, QUESTION]}
    assert prompt_text(chat) == prompt_text(gemini) == prompt_text(responses) == TEXT
    assert [count_tokens(t) for t in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]


def test_openai_chat_reports_prompt_tokens_streamed_and_whole(mockllm):
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": QUESTION},
    ]
    rid = uuid.uuid4().hex
    with openai_client(mockllm) as client:
        chunks = list(
            client.chat.completions.create(
                model="gpt-mock",
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                extra_query={"tokens": 3},
                extra_headers={"x-mock-request-id": rid},
            )
        )
        whole = client.chat.completions.create(model="gpt-mock", messages=messages, extra_query={"tokens": 3})
    for usage in (chunks[-1].usage, whole.usage):
        assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (TOKENS, 3, TOKENS + 3)
        assert usage.prompt_tokens_details.cached_tokens == 0
    record = mock_log(mockllm, rid)
    assert (record["input_tokens"], record["cached_tokens"], record["cache_write_tokens"]) == (TOKENS, 0, 0)


def test_responses_reports_input_tokens(mockllm):
    with openai_client(mockllm) as client:
        response = client.responses.create(
            model="gpt-mock",
            instructions=SYSTEM,
            input=[
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": ANSWER},
                {"role": "user", "content": QUESTION},
            ],
            extra_query={"tokens": 2},
        )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (TOKENS, 2)
    assert response.usage.input_tokens_details.cached_tokens == 0


def test_anthropic_reports_input_tokens_at_message_start_and_in_the_final_usage(mockllm):
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
        {"role": "user", "content": QUESTION},
    ]
    with anthropic_client(mockllm) as client:
        with client.messages.stream(
            model="claude-mock", max_tokens=100, system=SYSTEM, messages=messages, extra_query={"tokens": 2}
        ) as stream:
            events = list(stream)
            final = stream.get_final_message()
        whole = client.messages.create(model="claude-mock", max_tokens=100, system=SYSTEM, messages=messages)
    start = next(e for e in events if e.type == "message_start")
    assert start.message.usage.input_tokens == TOKENS
    delta = next(e for e in events if e.type == "message_delta")
    assert (delta.usage.input_tokens, delta.usage.output_tokens) == (TOKENS, 2)
    assert (final.usage.input_tokens, final.usage.cache_read_input_tokens) == (TOKENS, 0)
    assert whole.usage.input_tokens == TOKENS and whole.usage.cache_creation_input_tokens == 0


def test_gemini_reports_prompt_token_count(mockllm):
    body = {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [
            {"role": "user", "parts": [{"text": QUESTION}]},
            {"role": "model", "parts": [{"text": ANSWER}]},
            {"role": "user", "parts": [{"text": QUESTION}]},
        ],
    }
    url = mockllm.base_url + "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse&tokens=2"
    usage = data_lines(httpx.post(url, json=body).text)[-1]["usageMetadata"]
    assert usage["promptTokenCount"] == TOKENS
    assert usage["totalTokenCount"] == TOKENS + 2
    assert "cachedContentTokenCount" not in usage  # Gemini leaves out a zero count


@pytest.mark.parametrize("provider", ["groq", "mistral", "deepseek", "llamacpp", "azure-openai"])
def test_chat_dialects_report_the_same_count_in_their_own_usage(mockllm, provider):
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    if provider != "mistral":  # Mistral refuses stream_options and sends usage unasked
        body["stream_options"] = {"include_usage": True}
    headers = {"api-key": "k"} if provider == "azure-openai" else {}
    text = httpx.post(mockllm.base_url + f"/v1/chat/completions?provider={provider}", json=body, headers=headers).text
    usages = [c.get("usage") or (c.get("x_groq") or {}).get("usage") for c in data_lines(text)]
    usage = next(u for u in usages if u)
    assert usage["prompt_tokens"] == count_tokens(QUESTION)
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    if provider == "deepseek":
        assert (usage["prompt_cache_hit_tokens"], usage["prompt_cache_miss_tokens"]) == (0, count_tokens(QUESTION))
