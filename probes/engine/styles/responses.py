"""OpenAI Responses API streaming (POST /v1/responses): typed events, not chat chunks.

Only the deltas of generated text are tokens: output text (the answer),
reasoning summaries and reasoning text (thinking), refusals and function-call
arguments (generated, but not the answer TTFAT times). Lifecycle events
(response.created, in_progress, output_item.added, content_part.added,
output_text.done, ...) are bookkeeping and never a token.

Terminal events: response.completed, and response.incomplete (the model
stopped early, e.g. at max_output_tokens). Incomplete is classified like a
length stop in the other styles (finish_reason "length", stop_reason
"max_tokens"): the stream was delivered whole and every phase was measured, so
it is ok; its usage is kept. response.failed and error events are
upstream_error with the phases reached kept; a stream that ends without a
terminal event is truncated (the engine's rule for every style).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

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

ANSWER_DELTAS = ("response.output_text.delta",)
OTHER_TOKEN_DELTAS = (
    "response.reasoning_summary_text.delta",
    "response.reasoning_text.delta",
    "response.refusal.delta",
    "response.function_call_arguments.delta",
)
TERMINAL = ("response.completed", "response.incomplete")


class OpenAIResponses(Style):
    name = "responses"

    def plan(self, spec: ProbeSpec, api_key: str | None) -> RequestPlan:
        headers = self.base_headers(spec)
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        body = {"model": spec.model, "input": spec.prompt, "max_output_tokens": spec.max_tokens, "stream": True}
        return RequestPlan("POST", spec.url, headers, json.dumps(body).encode())

    def on_event(self, event: SSEEvent, state: StreamState) -> None:
        state.event(event.at_ns)
        payload = parse_json(event.data)
        if not isinstance(payload, dict):
            raise ProtocolError(f"unexpected stream event: {snippet(event.data)}")
        kind = payload.get("type") or event.event
        if kind in ANSWER_DELTAS or kind in OTHER_TOKEN_DELTAS:
            # An empty delta generated nothing (a look-alike, as in chat's empty content).
            if isinstance(payload.get("delta"), str) and payload["delta"]:
                state.token(event.at_ns, answer=kind in ANSWER_DELTAS)
        elif kind in TERMINAL:
            self._usage(payload.get("response"), state)
            state.terminal = True
        elif kind == "response.failed":
            response = payload.get("response")
            etype, message = error_details(response)
            state.upstream_error(etype or "response.failed", message)
        elif kind == "error" or event.event == "error":
            state.upstream_error(*_error_event(payload))

    @staticmethod
    def _usage(response: Any, state: StreamState) -> None:
        usage = response.get("usage") if isinstance(response, dict) else None
        # output_tokens already includes output_tokens_details.reasoning_tokens.
        if isinstance(usage, dict):
            keep_usage(
                state,
                input_tokens=usage.get("input_tokens"),
                cached_input_tokens=dig(usage, "input_tokens_details", "cached_tokens"),
                reasoning_tokens=dig(usage, "output_tokens_details", "reasoning_tokens"),
            )
        if isinstance(usage, dict) and isinstance(usage.get("output_tokens"), int):
            state.usage_output_tokens = usage["output_tokens"]


def _error_event(payload: dict[str, Any]) -> tuple[str | None, str | None]:
    """The Responses `error` event puts code and message at the top level
    ({"type": "error", "code": ..., "message": ...}); some servers nest them."""
    if "error" in payload:
        return error_details(payload)
    code, message = payload.get("code"), payload.get("message")
    return (str(code) if code else "error"), (str(message) if message is not None else None)
