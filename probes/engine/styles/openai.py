"""OpenAI Chat Completions streaming (and the many servers that copy it:
vLLM, Together, Groq, OpenRouter, DeepSeek...)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from probes.engine.providers import AZURE_KEY, provider_for
from probes.engine.sse import SSEEvent
from probes.engine.styles.base import (
    ProtocolError,
    RequestPlan,
    StreamState,
    Style,
    dig,
    error_details,
    keep_usage,
    parse_json,
    snippet,
)

if TYPE_CHECKING:
    from probes.engine.result import ProbeSpec

# Reasoning text arrives under different keys depending on the server:
# DeepSeek and vLLM use reasoning_content, OpenRouter and others reasoning.
_REASONING_KEYS = ("reasoning_content", "reasoning")


class OpenAIChat(Style):
    name = "openai"

    def plan(self, spec: ProbeSpec, api_key: str | None) -> RequestPlan:
        headers = self.base_headers(spec)
        provider = provider_for(spec.provider)
        if api_key:
            if provider is not None and provider.auth_header == AZURE_KEY:
                headers[AZURE_KEY] = api_key
            else:
                headers["authorization"] = f"Bearer {api_key}"
        body: dict[str, object] = {
            "model": spec.model,
            "messages": [{"role": "user", "content": spec.prompt}],
            "max_tokens": spec.max_tokens,
            "stream": True,
        }
        if provider is None or provider.stream_options:
            body["stream_options"] = {"include_usage": True}
        return RequestPlan("POST", spec.url, headers, json.dumps(body).encode())

    def on_event(self, event: SSEEvent, state: StreamState) -> None:
        state.event(event.at_ns)
        data = event.data.strip()
        if data == "[DONE]":
            state.terminal = True
            return
        chunk = parse_json(data)
        if not isinstance(chunk, dict):
            raise ProtocolError(f"unexpected stream chunk: {snippet(data)}")
        # An error in a data: line of an HTTP 200 stream: {"error": {...}} (OpenAI,
        # OpenRouter, which also ends the choice with finish_reason "error"), or
        # the whole chunk {"object": "error", ...} (vLLM, Mistral).
        if chunk.get("error") is not None or chunk.get("object") == "error":
            state.upstream_error(*error_details(chunk))
            return
        _usage(chunk, state)
        # A chunk without choices (Azure's prompt filter results, a usage-only
        # chunk) and a delta without text (the role chunk, content "" or null)
        # are bookkeeping, never a token.
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                raise ProtocolError(f"unexpected stream chunk: {snippet(data)}")
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                continue
            if any(isinstance(delta.get(k), str) and delta.get(k) for k in _REASONING_KEYS):
                state.token(event.at_ns, answer=False)
            elif isinstance(delta.get("content"), str) and delta["content"]:
                state.token(event.at_ns, answer=True)
            elif delta.get("tool_calls"):
                # Tool-call arguments are generated tokens, but not visible text.
                state.token(event.at_ns, answer=False)


def _usage(chunk: dict[str, Any], state: StreamState) -> None:
    """Output tokens from the chunk's usage (the standard place: on a final
    chunk with no choices when stream_options asked, on the finish chunk for
    Mistral, Together and Fireworks), Groq's x_groq.usage, or llama.cpp's
    timings.predicted_n when its server sends no usage."""
    groq = chunk.get("x_groq")
    for usage in (chunk.get("usage"), groq.get("usage") if isinstance(groq, dict) else None):
        if isinstance(usage, dict):
            # prompt_tokens counts the cached ones too (prompt_tokens_details.cached_tokens).
            keep_usage(
                state,
                input_tokens=usage.get("prompt_tokens"),
                cached_input_tokens=dig(usage, "prompt_tokens_details", "cached_tokens"),
                reasoning_tokens=dig(usage, "completion_tokens_details", "reasoning_tokens"),
            )
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            state.usage_output_tokens = usage["completion_tokens"]
            return
    timings = chunk.get("timings")
    predicted = timings.get("predicted_n") if isinstance(timings, dict) else None
    if state.usage_output_tokens is None and isinstance(predicted, int):
        state.usage_output_tokens = predicted
