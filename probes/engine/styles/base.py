"""What every API style shares: the request plan and the stream's state.

A style turns a spec into a request and each SSE event into facts: a token
(reasoning or answer), a usage count, the terminal event, an upstream error,
or malformed data. Timing rules live here, once, not in each style.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from probes.engine.sse import SSEComment, SSEEvent

if TYPE_CHECKING:
    from probes.engine.result import ProbeSpec


@dataclass
class RequestPlan:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    streaming: bool = True


class ProtocolError(Exception):
    """The provider sent data this style cannot read."""


@dataclass
class StreamState:
    first_event_ns: int | None = None
    first_token_ns: int | None = None
    first_answer_ns: int | None = None
    token_times: list[int] = field(default_factory=list)
    usage_output_tokens: int | None = None
    # input_tokens, cached_input_tokens, cache_write_tokens, reasoning_tokens (probes.engine.result.Measurement's
    # names), as the stream's usage reports them.
    usage: dict[str, int] = field(default_factory=dict)
    terminal: bool = False
    upstream_error_type: str | None = None
    upstream_error_message: str | None = None

    def event(self, at_ns: int) -> None:
        if self.first_event_ns is None:
            self.first_event_ns = at_ns

    def token(self, at_ns: int, *, answer: bool) -> None:
        """A generated token arrived (reasoning or thinking included)."""
        if self.first_token_ns is None:
            self.first_token_ns = at_ns
        if answer and self.first_answer_ns is None:
            self.first_answer_ns = at_ns
        self.token_times.append(at_ns)

    def upstream_error(self, error_type: str | None, message: str | None) -> None:
        self.upstream_error_type = error_type or "error"
        self.upstream_error_message = message or error_type or "error event in stream"

    @property
    def failed(self) -> bool:
        return self.upstream_error_type is not None


# Offending data goes into the error whole (up to this bound, far past what
# is shown): the engine redacts secrets first and only then cuts the message,
# since a key cut in two would no longer match.
SNIPPET_LIMIT = 4096


def snippet(data: str) -> str:
    return repr(data[:SNIPPET_LIMIT].replace("\n", " "))


def parse_json(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise ProtocolError(f"stream data is not JSON: {snippet(data)}") from None


def error_details(payload: Any) -> tuple[str | None, str | None]:
    """(type, message) from any provider's error body or error event."""
    if not isinstance(payload, dict):
        return None, None
    err = payload.get("error")
    if err is None and payload.get("object") == "error":
        # Mistral and vLLM put the error at the top level: {"object": "error", "message": ..., "type": ...}.
        err = payload
    if isinstance(err, str):
        return "error", err
    if not isinstance(err, dict):
        return None, None
    etype, code, status = err.get("type"), err.get("code"), err.get("status")
    # OpenAI's 429 says type "requests" and puts the useful word in code;
    # Gemini says status RESOURCE_EXHAUSTED and a numeric code (OpenRouter
    # and llama.cpp a numeric code too).
    if etype in (None, "", "requests") and isinstance(code, str) and code:
        etype = code
    etype = etype or status or (str(code) if code is not None else None)
    message = _message_text(err.get("message"))
    return (str(etype) if etype else None), message


def _message_text(message: Any) -> str | None:
    """A message as text. Mistral's 422 sends a validation report instead,
    {"detail": [{"loc": ["body", "stream_options"], "msg": "Extra inputs are
    not permitted"}]}: each field named with what is wrong with it."""
    if message is None:
        return None
    detail = message.get("detail") if isinstance(message, dict) else None
    if isinstance(detail, list) and detail and all(isinstance(d, dict) for d in detail):
        parts = []
        for d in detail:
            loc = ".".join(str(x) for x in d.get("loc") or () if x != "body")
            parts.append(f"{loc}: {d.get('msg')}" if loc else str(d.get("msg")))
        return "; ".join(parts)
    return message if isinstance(message, str) else json.dumps(message)


class Style:
    name = ""
    auth_header = ""

    def plan(self, spec: ProbeSpec, api_key: str | None) -> RequestPlan:
        raise NotImplementedError

    def on_event(self, event: SSEEvent, state: StreamState) -> None:
        raise NotImplementedError

    def on_comment(self, comment: SSEComment, state: StreamState) -> None:
        # Keep-alive comments are not events: they neither start the stream
        # nor carry tokens.
        return None

    def base_headers(self, spec: ProbeSpec) -> dict[str, str]:
        return {
            "accept": "text/event-stream",
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "accept-encoding": IDENTITY,
        }


USER_AGENT = "latency-atlas-probe/0.1"
# httpx asks for gzip by default. We time the first token's bytes as they come
# off the wire; a compressor upstream may hold tokens back to fill a block,
# so we ask for the stream as generated. (A server that compresses anyway is
# still decoded: see the engine's _body_chunks.)
IDENTITY = "identity"


def count(value: Any) -> int | None:
    """A token count from a usage object: a non-negative int (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def keep_usage(state: StreamState, **counts: Any) -> None:
    """Record the counts that are numbers; a later usage object overrides an earlier one (they are cumulative)."""
    for name, value in counts.items():
        found = count(value)
        if found is not None:
            state.usage[name] = found
