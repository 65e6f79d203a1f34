"""A long workload sends about its number of input tokens (as the mock server counts them), opened by a nonce drawn
for the run, so a provider's prompt cache never serves a second run; a cached pair's second call reads the cache
its first call filled, and keeps the first's time to first token as warm_ttft_ms; a failed first call is the
slot's row, saying so."""

from __future__ import annotations

import uuid

import pytest

from probes.engine.workloads import INPUT_TOKENS

STYLES = ["openai", "responses", "anthropic", "gemini"]


def run(measure, server, probe_url, style, workload, **knobs):
    rid = uuid.uuid4().hex
    url = probe_url(server, style, tokens=4, **knobs)
    m = measure(url, style, server, workload=workload, timeout_s=60.0, headers={"x-mock-request-id": rid})
    return m, server.log_record(rid)


@pytest.mark.parametrize("workload", ["prompt_1k", "prompt_10k"])
@pytest.mark.parametrize("style", STYLES)
def test_a_long_prompt_has_about_its_tokens_and_no_second_run_hits_a_cache(
    style, workload, mockllm, probe_url, measure
):
    first, logged = run(measure, mockllm, probe_url, style, workload, cache=1)
    second, _ = run(measure, mockllm, probe_url, style, workload, cache=1)
    for m in (first, second):
        assert m.outcome == "ok", m.error
        assert m.workload == workload
    wanted = INPUT_TOKENS[workload]
    assert 0.9 * wanted <= logged["input_tokens"] <= 1.3 * wanted
    assert first.input_tokens == logged["input_tokens"]
    # The nonce opens the prompt: the second run shares no cached prefix with the first.
    assert not second.cached_input_tokens


def test_the_hundred_thousand_token_prompt(mockllm, probe_url, measure):
    m, logged = run(measure, mockllm, probe_url, "openai", "prompt_100k")
    assert m.outcome == "ok", m.error
    assert logged["input_tokens"] >= 90_000


@pytest.mark.parametrize("style", STYLES)
def test_a_cached_pair_measures_the_call_that_read_the_cache(style, mockllm, probe_url, measure):
    # A tenth of a second per 1k uncached tokens: the first call pays about a second more prefill than the second.
    m, logged = run(measure, mockllm, probe_url, style, "cached_pair", cache=1, prefill_ms_per_1k=100)
    assert m.outcome == "ok", m.error
    assert m.workload == "cached_pair"
    assert m.cached_input_tokens == logged["cached_tokens"] > 0
    assert m.warm_ttft_ms is not None and m.ttft_ms is not None
    assert m.warm_ttft_ms > m.ttft_ms


def test_a_cached_pair_whose_first_call_fails_stores_that_failure(mockllm, probe_url, measure):
    m, _ = run(measure, mockllm, probe_url, "openai", "cached_pair", fault=500)
    assert (m.outcome, m.http_status) == ("http_error", 500)
    assert m.error.startswith("the call filling the cache failed")
    assert m.warm_ttft_ms is None


def test_the_short_workload_sends_the_prompt_alone(mockllm, probe_url, measure):
    m, logged = run(measure, mockllm, probe_url, "openai", "short")
    assert m.outcome == "ok"
    assert logged["input_tokens"] < 50
