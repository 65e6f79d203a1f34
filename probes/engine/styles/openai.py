"""OpenAI Chat Completions streaming (and the many servers that copy it:
vLLM, Together, Groq, OpenRouter, DeepSeek...)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from probes.engine.providers import AZURE_KEY, provider_for
from probes.engine.sse import SSEEvent
from probes.engine.styles.base import ProtocolError, RequestPlan, StreamState, Style, error_details, parse_json, snippet

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
        if "error" in chunk:
            state.upstream_error(*error_details(chunk))
            return
        usage = chunk.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            state.usage_output_tokens = usage["completion_tokens"]
        for choice in chunk.get("choices") or ():
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
