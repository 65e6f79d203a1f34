"""What a request's prompt costs the mock server: its input tokens, the part a provider-style prompt cache
already holds, and the request and token budgets of a rate limit, with each provider's headers and bodies for
them and for an overloaded server. Plain data and functions; server.py asks them per request.

The rules, the same for every API style:

* The prompt text is every text of the request's system prompt or instructions, then of its messages, inputs or
  contents in order (strings, and the `text` of content parts and blocks), joined by newlines. Its input tokens
  are ceil(characters / 4). Images, tools and other non-text parts count nothing.
* The prompt cache (knob `cache=1`) holds prefixes of the prompt text, as OpenAI's does: the first 128, 256, ...
  tokens (512 characters each block), from `cache_min_tokens` on, keyed by a SHA-256 of the model and the
  prefix, per server instance. A request reads the longest of its prefixes still held (`cached_tokens`) and
  writes the rest of its cacheable ones (`cache_write_tokens`, Anthropic's `cache_creation_input_tokens`); a
  prefix lives `cache_ttl_s` after it was last written or read. A prompt that begins with text no earlier
  prompt began with (a per-run nonce) shares no block with any, so it never hits.
* The rate limit counts per API key (its digest) and model, in fixed windows of `ratelimit_window_s` that start
  at the first request counted: at most `ratelimit_requests` requests and `ratelimit_tokens` tokens (input
  tokens plus the output the answer will hold) per window, 0 meaning no limit. A request over either budget is
  answered 429 and not counted.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from devtools.mockllm.dialects import http_error_body
from devtools.mockllm.formats import error_body

CHARS_PER_TOKEN = 4
CACHE_BLOCK_TOKENS = 128
# Both are per server instance and live as long as it does: capped so that a long benchmark cannot grow them.
CACHE_CAPACITY = 100_000
LIMITER_CAPACITY = 10_000
_PROMPT_KEYS = ("system", "instructions", "systemInstruction", "messages", "input", "contents")
OVERLOADED = "Overloaded"
OPENAI_OVERLOADED = "The engine is currently overloaded, please try again later"
GEMINI_OVERLOADED = "The model is overloaded. Please try again later."


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return [value["text"]]
        return [text for key in ("content", "parts") if key in value for text in _texts(value[key])]
    return []


def prompt_text(body: Mapping[str, Any]) -> str:
    return "\n".join(text for key in _PROMPT_KEYS if key in body for text in _texts(body[key]))


def count_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def prefill_ms(uncached_tokens: int, knobs: Mapping[str, Any]) -> float:
    return uncached_tokens / 1000 * float(knobs["prefill_ms_per_1k"])


class PromptCache:
    """Prefix hashes with their expiry; the clock is a parameter so that tests can move it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, capacity: int = CACHE_CAPACITY) -> None:
        self.clock, self.capacity = clock, capacity
        self._expires: OrderedDict[bytes, float] = OrderedDict()

    def use(self, model: str, text: str, ttl_s: float, min_tokens: int) -> tuple[int, int]:
        """(cached_tokens, cache_write_tokens) of this prompt, the cache updated for it."""
        block = CACHE_BLOCK_TOKENS * CHARS_PER_TOKEN
        blocks = len(text) // block
        digest = hashlib.sha256(model.encode() + b"\0")
        keys = []  # keys[i]: the prefix of i + 1 blocks, the ones below cache_min_tokens left out
        for i in range(blocks):
            # One running hash: each prefix costs its own block, so a 100k-token prompt stays linear.
            digest.update(text[i * block : (i + 1) * block].encode())
            keys.append(digest.copy().digest() if (i + 1) * CACHE_BLOCK_TOKENS >= min_tokens else None)
        now = self.clock()
        hit = 0
        for i in range(blocks - 1, -1, -1):
            key = keys[i]
            expires = self._expires.get(key) if key is not None else None
            if expires is not None and now < expires:
                hit = i + 1
                break
        for key in keys:
            if key is not None:
                self._expires[key] = now + ttl_s
                self._expires.move_to_end(key)
        while len(self._expires) > self.capacity:
            self._expires.popitem(last=False)
        cacheable = max((i + 1 for i, key in enumerate(keys) if key is not None), default=0)
        return hit * CACHE_BLOCK_TOKENS, (cacheable - hit) * CACHE_BLOCK_TOKENS


@dataclass
class Headroom:
    """What a budget has left after a request (None: that budget is not set), and when its window ends."""

    requests_limit: int | None
    requests_remaining: int | None
    tokens_limit: int | None
    tokens_remaining: int | None
    reset_s: float
    exceeded: str | None = None  # "requests" or "tokens" when the request was refused

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset_s))


@dataclass
class _Window:
    start: float
    requests: int = 0
    tokens: int = 0


class RateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic, capacity: int = LIMITER_CAPACITY) -> None:
        self.clock, self.capacity = clock, capacity
        self._windows: OrderedDict[tuple[str, str], _Window] = OrderedDict()

    def admit(self, key: tuple[str, str], knobs: Mapping[str, Any], cost: int) -> Headroom | None:
        """Count the request if both budgets allow it; None when the knobs set no budget."""
        max_requests, max_tokens = knobs["ratelimit_requests"], knobs["ratelimit_tokens"]
        if not max_requests and not max_tokens:
            return None
        now, window_s = self.clock(), knobs["ratelimit_window_s"]
        window = self._windows.get(key)
        if window is None or now >= window.start + window_s:
            window = self._windows[key] = _Window(now)
        self._windows.move_to_end(key)
        while len(self._windows) > self.capacity:
            self._windows.popitem(last=False)
        exceeded = None
        if max_requests and window.requests + 1 > max_requests:
            exceeded = "requests"
        elif max_tokens and window.tokens + cost > max_tokens:
            exceeded = "tokens"
        if exceeded is None:
            window.requests += 1
            window.tokens += cost
        return Headroom(
            max_requests or None,
            max_requests - window.requests if max_requests else None,
            max_tokens or None,
            max_tokens - window.tokens if max_tokens else None,
            window.start + window_s - now,
            exceeded,
        )


def fault_headroom(knobs: Mapping[str, Any]) -> Headroom:
    """The fault=429 answer's budget: the requests spent, back in retry_after seconds."""
    return Headroom(knobs["ratelimit_requests"] or None, 0, None, None, knobs["retry_after"], "requests")


def openai_duration(seconds: float) -> str:
    """OpenAI's x-ratelimit-reset-* values: whole milliseconds under a second, else Go's duration format (hours and
    minutes when there are any, then seconds with up to three decimals)."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:.3f}".rstrip("0").rstrip(".") + "s"
    if hours or minutes:
        text = f"{int(minutes)}m" + text
    return f"{int(hours)}h" + text if hours else text


def ratelimit_headers(style: str, room: Headroom | None) -> tuple[tuple[str, str], ...]:
    """The headroom headers each provider sends; Gemini sends none, on success or on a 429."""
    if room is None or style == "gemini":
        return ()
    anthropic = style == "anthropic"
    if anthropic:  # an RFC 3339 moment where OpenAI gives a duration
        reset = datetime.fromtimestamp(time.time() + room.reset_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    else:
        reset = openai_duration(room.reset_s)

    def fmt(kind: str, field: str) -> str:
        return f"anthropic-ratelimit-{kind}-{field}" if anthropic else f"x-ratelimit-{field}-{kind}"

    headers = []
    for kind, limit, remaining in (
        ("requests", room.requests_limit, room.requests_remaining),
        ("tokens", room.tokens_limit, room.tokens_remaining),
    ):
        if limit is not None:
            headers.append((fmt(kind, "limit"), str(limit)))
        if remaining is not None:
            headers += [(fmt(kind, "remaining"), str(remaining)), (fmt(kind, "reset"), reset)]
    return tuple(headers)


def rate_limited(
    provider: str, style: str, room: Headroom, echo: str
) -> tuple[str, dict[str, Any], tuple[tuple[str, str], ...]]:
    """The 429's message, body and headers for a request over budget, in the provider's words."""
    kind = room.exceeded or "requests"
    limit = room.requests_limit if kind == "requests" else room.tokens_limit
    if style == "anthropic":
        message = f"This request would exceed the rate limit for your organization of {limit} {kind} per window."
    elif style == "gemini":
        message = "You exceeded your current quota, please check your plan and billing details."
    else:
        what = "requests per min (RPM)" if kind == "requests" else "tokens per min (TPM)"
        message = f"Rate limit reached for {kind} on {what}: Limit {limit}. Please try again in {room.retry_after}s."
    message += echo
    headers = (*ratelimit_headers(style, room), ("retry-after", str(room.retry_after)))
    if style == "gemini":
        details = [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": kind}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{room.retry_after}s"},
        ]
        return message, error_body(style, 429, message, details=details), headers
    body = http_error_body(provider, style, 429, message)
    if style != "anthropic" and isinstance(body.get("error"), dict) and "type" in body["error"]:
        body["error"]["type"] = kind  # OpenAI names the budget spent: "requests" or "tokens"
    return message, body, headers


def overloaded(style: str, echo: str) -> tuple[int, str, dict[str, Any]]:
    """Anthropic's 529 overloaded_error; the others' 503 saying the model is overloaded."""
    if style == "anthropic":
        message = OVERLOADED + echo
        return 529, message, {"type": "error", "error": {"type": "overloaded_error", "message": message}}
    if style == "gemini":
        message = GEMINI_OVERLOADED + echo
        return 503, message, {"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}}
    message = OPENAI_OVERLOADED + echo
    return 503, message, {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
