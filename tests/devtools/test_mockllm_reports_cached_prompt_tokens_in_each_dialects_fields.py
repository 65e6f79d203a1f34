"""With cache=1 the mock keeps the prompts' prefixes (blocks of 128 tokens, from cache_min_tokens on) for
cache_ttl_s: a later prompt sharing a prefix reports it as cached in its provider's own fields, the call that
filled the cache reports what it wrote (Anthropic), and a prompt that starts with text of its own never hits."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from devtools.mockllm.workloads import PromptCache
from tests.devtools.test_mockllm_anthropic_sdk import make_client as anthropic_client
from tests.devtools.test_mockllm_openai_sdk import make_client as openai_client
from tests.support import mock_log

CACHE = {"cache": 1, "tokens": 2}
# 8,000 characters before the question: 15 whole blocks of 512 characters (128 tokens) are shared.
SHARED_CHARS = 8000
CACHED = 15 * 128


def shared_context() -> str:
    """A context no other test shares: it starts with a nonce, as the engine's prompts will."""
    nonce = uuid.uuid4().hex
    return nonce + "x" * (SHARED_CHARS - len(nonce))


def total_tokens(context: str, question: str) -> int:
    return -(-(len(context) + 1 + len(question)) // 4)


def data_lines(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_openai_chat_reports_the_cached_prefix_in_prompt_tokens_details(mockllm):
    context = shared_context()
    ids = [uuid.uuid4().hex for _ in range(3)]
    usages = []
    with openai_client(mockllm) as client:
        for rid, question in zip(ids, ("First question?", "Second question?", "First question?"), strict=True):
            completion = client.chat.completions.create(
                model="gpt-mock",
                messages=[{"role": "system", "content": context}, {"role": "user", "content": question}],
                extra_query=CACHE,
                extra_headers={"x-mock-request-id": rid},
            )
            usages.append(completion.usage)
    assert [u.prompt_tokens_details.cached_tokens for u in usages] == [0, CACHED, CACHED]
    assert usages[1].prompt_tokens == total_tokens(context, "Second question?")  # cached tokens are included
    records = [mock_log(mockllm, rid) for rid in ids]
    assert [(r["cached_tokens"], r["cache_write_tokens"]) for r in records] == [(0, CACHED), (CACHED, 0), (CACHED, 0)]


def test_a_longer_prompt_reads_the_cached_prefix_and_writes_its_new_blocks(mockllm):
    context = shared_context()
    with openai_client(mockllm) as client:

        def usage(content: str):
            messages = [{"role": "user", "content": content}]
            return client.chat.completions.create(model="gpt-mock", messages=messages, extra_query=CACHE).usage

        usage(context)
        longer = usage(context + "y" * 1024)
    assert longer.prompt_tokens_details.cached_tokens == CACHED
    assert longer.prompt_tokens == (SHARED_CHARS + 1024) // 4


def test_responses_reports_it_in_input_tokens_details(mockllm):
    context = shared_context()
    with openai_client(mockllm) as client:
        first, second = (
            client.responses.create(model="gpt-mock", instructions=context, input=question, extra_query=CACHE)
            for question in ("One?", "Two?")
        )
    assert (first.usage.input_tokens_details.cached_tokens, second.usage.input_tokens_details.cached_tokens) == (
        0,
        CACHED,
    )
    assert second.usage.input_tokens == total_tokens(context, "Two?")


def test_anthropic_reports_the_cache_write_then_the_cache_read_beside_the_uncached_input(mockllm):
    context = shared_context()
    messages = [{"role": "user", "content": "What does it say?"}]
    with anthropic_client(mockllm) as client:
        written = client.messages.create(
            model="claude-mock", max_tokens=100, system=context, messages=messages, extra_query=CACHE
        )
        with client.messages.stream(
            model="claude-mock", max_tokens=100, system=context, messages=messages, extra_query=CACHE
        ) as stream:
            start = next(e for e in stream if e.type == "message_start")
            stream.until_done()
            read = stream.get_final_message()
    total = total_tokens(context, "What does it say?")
    assert (written.usage.cache_creation_input_tokens, written.usage.cache_read_input_tokens) == (CACHED, 0)
    assert (read.usage.cache_creation_input_tokens, read.usage.cache_read_input_tokens) == (0, CACHED)
    # Anthropic's input_tokens are the ones neither read from nor written to the cache.
    assert written.usage.input_tokens == read.usage.input_tokens == total - CACHED
    assert start.message.usage.cache_read_input_tokens == CACHED


def test_gemini_reports_it_as_cached_content_token_count(mockllm):
    context = shared_context()
    url = mockllm.base_url + "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse&cache=1&tokens=1"
    usages = []
    for question in ("One?", "Two?"):
        body = {"systemInstruction": {"parts": [{"text": context}]}, "contents": [{"parts": [{"text": question}]}]}
        usages.append(data_lines(httpx.post(url, json=body).text)[-1]["usageMetadata"])
    assert "cachedContentTokenCount" not in usages[0]
    assert usages[1]["cachedContentTokenCount"] == CACHED
    assert usages[1]["promptTokenCount"] == total_tokens(context, "Two?")


def test_deepseek_reports_it_in_its_own_fields_too(mockllm):
    context = shared_context()
    url = mockllm.base_url + "/v1/chat/completions?provider=deepseek&cache=1&tokens=1"
    usages = []
    for question in ("One?", "Two?"):
        body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": context + "\n" + question}]}
        usages.append(httpx.post(url, json=body).json()["usage"])
    total = total_tokens(context, "Two?")
    assert usages[1]["prompt_tokens_details"]["cached_tokens"] == usages[1]["prompt_cache_hit_tokens"] == CACHED
    assert usages[1]["prompt_cache_miss_tokens"] == total - CACHED


def test_a_prompt_that_starts_with_a_nonce_of_its_own_never_hits(mockllm):
    context = shared_context()
    with openai_client(mockllm) as client:
        cached = []
        for _ in range(3):
            # The same long text after a prefix no other prompt had: no block of it is shared with another.
            content = uuid.uuid4().hex + context
            usage = client.chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": content}], extra_query=CACHE
            ).usage
            cached.append(usage.prompt_tokens_details.cached_tokens)
    assert cached == [0, 0, 0]


@pytest.mark.parametrize(
    ("knobs", "why"),
    [
        ({"tokens": 1}, "the cache is off unless asked for"),
        ({"cache": 1, "tokens": 1, "cache_min_tokens": 4096}, "a prefix shorter than cache_min_tokens is not kept"),
        ({"cache": 1, "tokens": 1, "cache_ttl_s": 0}, "a prefix with no lifetime is gone at once"),
    ],
)
def test_no_hit_when(mockllm, knobs, why):
    context = shared_context()
    with openai_client(mockllm) as client:
        for question in ("One?", "Two?"):
            messages = [{"role": "user", "content": context + question}]
            usage = client.chat.completions.create(model="gpt-mock", messages=messages, extra_query=knobs).usage
    assert usage.prompt_tokens_details.cached_tokens == 0, why


def test_the_cache_is_per_model(mockllm):
    context = shared_context()
    with openai_client(mockllm) as client:
        cached = [
            client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": context}], extra_query=CACHE
            ).usage.prompt_tokens_details.cached_tokens
            for model in ("model-a", "model-b", "model-a")
        ]
    assert cached == [0, 0, CACHED]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_prefix_lives_cache_ttl_s_after_its_last_use():
    clock = FakeClock()
    cache = PromptCache(clock=clock)
    text = "z" * 4096  # 8 blocks, 1,024 tokens
    assert cache.use("m", text, ttl_s=300, min_tokens=1024) == (0, 1024)
    clock.now += 299
    assert cache.use("m", text, ttl_s=300, min_tokens=1024) == (1024, 0)  # read, and so kept 300 s more
    clock.now += 299
    assert cache.use("m", text, ttl_s=300, min_tokens=1024) == (1024, 0)
    clock.now += 300
    assert cache.use("m", text, ttl_s=300, min_tokens=1024) == (0, 1024)


def test_a_full_cache_forgets_its_oldest_prefixes_first():
    cache = PromptCache(clock=FakeClock(), capacity=2)
    first, second = "a" * 512, "b" * 512
    cache.use("m", first, ttl_s=300, min_tokens=0)
    cache.use("m", second, ttl_s=300, min_tokens=0)
    cache.use("m", "c" * 512, ttl_s=300, min_tokens=0)
    assert cache.use("m", first, ttl_s=300, min_tokens=0)[0] == 0
    assert cache.use("m", "c" * 512, ttl_s=300, min_tokens=0)[0] == 128
