"""Anthropic Messages streaming."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from probes.engine.sse import SSEEvent
from probes.engine.styles.base import (
    ProtocolError,
    RequestPlan,
    StreamState,
    Style,
    count,
    dig,
    error_details,
    keep_usage,
    parse_json,
    snippet,
)
from probes.engine.workloads import CACHED_PAIR

if TYPE_CHECKING:
    from probes.engine.result import ProbeSpec

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicMessages(Style):
    name = "anthropic"

    def plan(self, spec: ProbeSpec, api_key: str | None) -> RequestPlan:
        headers = self.base_headers(spec)
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if api_key:
            headers["x-api-key"] = api_key
        body = {
            "model": spec.model,
            "max_tokens": spec.max_tokens,
            "messages": [{"role": "user", "content": _content(spec)}],
            "stream": True,
        }
        return RequestPlan("POST", spec.url, headers, json.dumps(body).encode())

    def on_event(self, event: SSEEvent, state: StreamState) -> None:
        state.event(event.at_ns)
        payload = parse_json(event.data)
        if not isinstance(payload, dict):
            raise ProtocolError(f"unexpected stream event: {snippet(event.data)}")
        kind = payload.get("type") or event.event
        if kind == "error" or event.event == "error":
            state.upstream_error(*error_details(payload))
        elif kind == "content_block_delta":
            delta = payload.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta" and delta.get("text"):
                state.token(event.at_ns, answer=True)
            elif (dtype == "thinking_delta" and delta.get("thinking")) or (
                dtype == "input_json_delta" and delta.get("partial_json")
            ):
                state.token(event.at_ns, answer=False)
            # signature_delta carries no generated token.
        elif kind == "message_start":
            _input_usage(dig(payload, "message", "usage"), state)
        elif kind == "message_delta":
            # Anthropic's usage here is cumulative: the last one is the total.
            usage = payload.get("usage") or {}
            _input_usage(usage, state)
            if isinstance(usage.get("output_tokens"), int):
                state.usage_output_tokens = usage["output_tokens"]
        elif kind == "message_stop":
            state.terminal = True
        # content_block_start/stop and ping are bookkeeping.


def _input_usage(usage: object, state: StreamState) -> None:
    """Anthropic's input_tokens are those after the last cache breakpoint only: with the tokens read from the cache
    and those written to it, the prompt's whole count, as the other providers report theirs."""
    if not isinstance(usage, dict):
        return
    keep_usage(
        state,
        cached_input_tokens=usage.get("cache_read_input_tokens"),
        cache_write_tokens=usage.get("cache_creation_input_tokens"),
    )
    uncached = count(usage.get("input_tokens"))
    if uncached is not None:
        cached = state.usage.get("cached_input_tokens", 0) + state.usage.get("cache_write_tokens", 0)
        keep_usage(state, input_tokens=uncached + cached)


def _content(spec: ProbeSpec) -> object:
    """The user message's content. Anthropic caches a prompt only up to a block marked for it: a cached pair marks
    its text, so the second call can read what the first wrote."""
    if spec.workload == CACHED_PAIR:
        return [{"type": "text", "text": spec.prompt, "cache_control": {"type": "ephemeral"}}]
    return spec.prompt
