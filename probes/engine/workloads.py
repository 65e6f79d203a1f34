"""What a probe sends (ProbeSpec.workload): today's short prompt, a long one of about 1k, 10k or 100k input tokens,
or a cached pair. Built on the worker, from the workload's name alone, so the longest prompt never crosses the broker.

A long prompt opens with a nonce drawn for the run, so no provider's prompt cache (they match prefixes) can serve
it; its body is the same words every time, in the same order (a fixed seed), so runs differ by their nonce only.
A cached pair sends one such prompt twice, the nonce shared: the first call fills the provider's cache, the second
is measured, and the first's time to first token is kept beside it (warm_ttft_ms)."""

from __future__ import annotations

import random
import secrets
from functools import lru_cache

SHORT = "short"
PROMPT_1K = "prompt_1k"
PROMPT_10K = "prompt_10k"
PROMPT_100K = "prompt_100k"
CACHED_PAIR = "cached_pair"
WORKLOADS = (SHORT, PROMPT_1K, PROMPT_10K, PROMPT_100K, CACHED_PAIR)

# Approximate input tokens of each long workload; a cached pair's prompt is long enough for every provider's cache
# (OpenAI's and Gemini's implicit caches start at 1,024 tokens, Anthropic's at 1,024 to 4,096 by model).
INPUT_TOKENS = {PROMPT_1K: 1_000, PROMPT_10K: 10_000, PROMPT_100K: 100_000, CACHED_PAIR: 10_000}
# English prose runs about four characters a token in the providers' tokenizers.
CHARS_PER_TOKEN = 4
# Common words, so the text tokenizes as prose does (about a token each, with its space).
_PARAGRAPH = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
    "you were her she there been one all we their has would when if so no will more can who out about up them "
    "some could what into than time only other new then these two may first any now like our over such people "
    "made also after did many before must through back years where much your way well down should because each "
    "just those how too little state good very make world still own see men work long get here between both life "
    "being under never day same another know while last might us great old year off come since against go came "
    "right used take three region latency token model answer network light fiber route server cache prompt stream "
    "measure"
)
WORDS = tuple(_PARAGRAPH.split())


@lru_cache(maxsize=len(INPUT_TOKENS))
def _body(tokens: int) -> str:
    rng = random.Random(tokens)  # the same words for every run of a workload
    out: list[str] = []
    size = 0
    while size < tokens * CHARS_PER_TOKEN:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def nonce() -> str:
    return secrets.token_hex(8)


def prompt_for(workload: str, question: str, run_nonce: str) -> str:
    """The prompt a call of this workload sends: the question alone, or a long text before it."""
    if workload == SHORT:
        return question
    text = _body(INPUT_TOKENS[workload])
    return f"Run {run_nonce}. Read the text, then answer the question after it.\n\n{text}\n\n{question}"
