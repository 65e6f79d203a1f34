"""The OpenAI-compatible providers' dialects of a chat-completions stream, chosen by the `provider` knob
(or by Azure's own path): what each sends before the first token, where it puts reasoning and usage, and
how it says that something failed, in a request it refuses, an HTTP error body or a data: line of an HTTP
200 stream. The keys are the presets' (probes.engine.providers), so a preset's test meets its scenario.

Shapes follow the providers' documentation and the streams quoted in their issue trackers (the mock only
is what the presets were checked against here): Azure's choice-less prompt_filter_results chunk and its
401/404 bodies, Mistral's 422 for stream_options, Groq's x_groq.usage, OpenRouter's processing comments
and in-stream error with finish_reason "error", the top-level `{"object": "error"}` of vLLM and Mistral,
llama.cpp's timings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from devtools.mockllm.formats import (
    FORMATS,
    META,
    SERVER_ERROR,
    TOKEN,
    WAIT,
    _Anthropic,
    _Gemini,
    _OpenAI,
    _Responses,
    error_body,
)
from devtools.mockllm.knobs import PROVIDERS

NONE = "none"
AZURE, DEEPSEEK, MISTRAL, GROQ, OPENROUTER, VLLM, LLAMACPP, OLLAMA = (
    "azure-openai",
    "deepseek",
    "mistral",
    "groq",
    "openrouter",
    "vllm",
    "llamacpp",
    "ollama",
)
__all__ = ["PROVIDERS", "Dialect", "http_error_body", "make_format", "refusal"]

AZURE_PATH = re.compile(r"/openai/(?:deployments/([^/]+)|v1)/chat/completions")
_API_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}(?:-preview)?")
AZURE_401 = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an "
    "active subscription and use a correct regional API endpoint for your resource."
)
MISTRAL_EXTRA = "Extra inputs are not permitted"
_FILTERS = {name: {"filtered": False, "severity": "safe"} for name in ("hate", "self_harm", "sexual", "violence")}
# Where reasoning text goes in each dialect; the others use DeepSeek's key, as vLLM did first.
_REASONING_KEY = {OPENROUTER: "reasoning", OLLAMA: "reasoning", GROQ: "reasoning"}
_CONTENT_BESIDE_REASONING = {DEEPSEEK: None, OPENROUTER: "", OLLAMA: ""}
# Usage sent whether or not stream_options asked for it, and where.
_USAGE_ON_FINISH = ("mistral", "together", "fireworks")
_USAGE_CHUNK_UNASKED = (OPENROUTER,)
# Comments while the request waits for its first token, and their text.
_WAIT_COMMENTS = {DEEPSEEK: " keep-alive", OPENROUTER: " OPENROUTER PROCESSING"}


def refusal(provider: str, path: str, query: Mapping[str, str], headers: Mapping[str, str], body: dict) -> Any:
    """(status, body) when the provider would refuse this request before streaming anything, else None."""
    if provider == AZURE:
        # Azure takes an API key only in api-key; a bearer token is for Entra ID, never a key.
        if not headers.get("api-key"):
            return 401, {"error": {"code": "401", "message": AZURE_401}}
        if path.startswith("/openai/deployments/"):
            version = query.get("api-version")
            if version is None:
                return 404, {"error": {"code": "404", "message": "Resource not found"}}
            if not _API_VERSION.fullmatch(version):
                return 400, {"error": {"code": "BadRequest", "message": "API version not supported"}}
    if provider == MISTRAL and "stream_options" in body:
        detail = {
            "type": "extra_forbidden",
            "loc": ["body", "stream_options"],
            "msg": MISTRAL_EXTRA,
            "input": body["stream_options"],
        }
        return 422, {
            "object": "error",
            "message": {"detail": [detail]},
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    return None


def http_error_body(provider: str, style: str, status: int, message: str) -> dict[str, Any]:
    """The 429/500 body as each provider writes it."""
    if style != "openai" or provider in (NONE, "openai", DEEPSEEK, "together", "fireworks"):
        return error_body(style, status, message)
    if provider == AZURE:
        return {"error": {"code": "429" if status == 429 else "InternalServerError", "message": message}}
    if provider in (MISTRAL, VLLM):
        kind = {429: "rate_limited", 500: "internal_server_error"} if provider == MISTRAL else {}
        name = kind.get(status) or ("TooManyRequestsError" if status == 429 else "InternalServerError")
        return {"object": "error", "message": message, "type": name, "param": None, "code": status}
    if provider == OPENROUTER:
        return {"error": {"code": status, "message": message, "metadata": {"provider_name": "Mock"}}}
    if provider == LLAMACPP:
        kind = "server_error" if status == 500 else "unavailable_error"
        return {"error": {"code": status, "message": message, "type": kind}}
    if provider == GROQ:
        kind, code = ("requests", "rate_limit_exceeded") if status == 429 else ("internal_server_error", None)
        return {"error": {"message": message, "type": kind, "code": code}}
    return {"error": {"message": message, "type": "api_error", "param": None, "code": None}}  # Ollama


class Dialect(_OpenAI):
    """Chat completions as one OpenAI-compatible provider streams them."""

    def __init__(self, provider: str, *args: Any) -> None:
        super().__init__(*args)
        self.provider = provider
        self.reasoning_key = _REASONING_KEY.get(provider, "reasoning_content")
        if provider in _WAIT_COMMENTS:
            # These providers comment while the request waits, whatever the pings knob says.
            self.pings = max(self.pings, 2)

    def ping(self) -> bytes:
        return self.sse(comment=_WAIT_COMMENTS.get(self.provider, " keep-alive"))

    def obj(self, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        if self.provider == AZURE:
            choice["content_filter_results"] = {} if delta is None or not delta.get("content") else _FILTERS
        return {
            "id": "chatcmpl-mock" + self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_ollama" if self.provider == OLLAMA else None,
            "choices": [] if delta is None else [choice],
            **extra,
        }

    def delta(self, **fields: Any) -> dict[str, Any]:
        # Ollama repeats the role in every delta and never sends a role-only chunk.
        return {"role": "assistant", **fields} if self.provider == OLLAMA else fields

    def first_chunk(self) -> bytes | None:
        if self.provider == OLLAMA:
            return None
        if self.provider == GROQ:
            return self.sse(self.obj({"role": "assistant", "content": ""}, x_groq={"id": "req_mock" + self.id}))
        return self.sse(self.obj({"role": "assistant", "content": None if self.provider == LLAMACPP else ""}))

    def stream(self) -> Iterator[tuple[int, bytes]]:
        p, usage = self.provider, self.knobs["usage"]
        if p == AZURE:
            yield META, self.sse(self.azure_filter_chunk())
        first = self.first_chunk()
        # Comments go out while the request waits for the model, before any chunk.
        if p in _WAIT_COMMENTS:
            yield WAIT, b""
        if first is not None:
            yield META, first
        if p not in _WAIT_COMMENTS:
            yield WAIT, b""
        for word in self.reasoning_words:
            # DeepSeek sends content null beside the reasoning, OpenRouter and Ollama an empty string.
            beside = {"content": _CONTENT_BESIDE_REASONING[p]} if p in _CONTENT_BESIDE_REASONING else {}
            yield TOKEN, self.sse(self.obj(self.delta(**beside, **{self.reasoning_key: word})))
        yield from self.answers(lambda word, last: self.sse(self.obj(self.delta(content=word))))
        finish: dict[str, Any] = {}
        if usage and p in _USAGE_ON_FINISH:
            finish["usage"] = self.usage()
        if usage and p == GROQ:
            finish["x_groq"] = {"id": "req_mock" + self.id, "usage": {**self.usage(), "queue_time": 0.01}}
        if usage and p == LLAMACPP:
            finish["timings"] = self.timings()
        yield META, self.sse(self.obj({}, "length" if self.capped else "stop", **finish))
        if usage and (self.include_usage or p in _USAGE_CHUNK_UNASKED) and p not in _USAGE_ON_FINISH:
            extra = {"timings": self.timings()} if p == LLAMACPP else {}
            yield META, self.sse(self.obj(None, usage=self.usage(), **extra))
        yield META, self.sse("[DONE]")

    def azure_filter_chunk(self) -> dict[str, Any]:
        return {
            "choices": [],
            "created": 0,
            "id": "",
            "model": "",
            "object": "",
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _FILTERS}],
        }

    def usage(self) -> dict[str, Any]:
        usage = super().usage()
        if self.provider == DEEPSEEK:  # DeepSeek's own names for its context cache, beside OpenAI's
            usage["prompt_cache_hit_tokens"] = self.cached_tokens
            usage["prompt_cache_miss_tokens"] = self.prompt_tokens - self.cached_tokens
        return usage

    def timings(self) -> dict[str, Any]:
        return {"prompt_n": self.prompt_tokens, "prompt_ms": 1.0, "predicted_n": self.completion_tokens}

    def error(self) -> bytes:
        message = SERVER_ERROR + self.echo
        if self.provider == OPENROUTER:
            # A failure after the stream began: an error object in a chunk that ends the choice with "error".
            chunk = self.obj({"content": ""}, "error", error={"code": 502, "message": "Provider returned error"})
            chunk["error"]["message"] += self.echo
            return self.sse(chunk)
        if self.provider in (MISTRAL, VLLM):
            return self.sse(http_error_body(self.provider, "openai", 500, message))
        if self.provider == LLAMACPP:
            return self.sse({"error": {"code": 500, "message": message, "type": "server_error"}})
        return super().error()


def make_format(
    provider: str, style: str, model: str, body: dict[str, Any], knobs: dict[str, Any]
) -> _OpenAI | _Responses | _Anthropic | _Gemini:
    """The answer a request gets: its style's, in the provider's dialect for chat completions."""
    config = body.get("generationConfig")
    max_tokens = (
        body.get("max_output_tokens")
        if style == "responses"
        else body.get("max_completion_tokens", body.get("max_tokens"))
        if style != "gemini"
        else config.get("maxOutputTokens")
        if isinstance(config, dict)
        else None
    )
    if provider != "none":
        return Dialect(provider, model, body, knobs, max_tokens)
    return FORMATS[style](model, body, knobs, max_tokens)
