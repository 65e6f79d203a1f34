"""Gemini streamGenerateContent with alt=sse."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from probes.engine.sse import SSEEvent
from probes.engine.styles.base import (
    ProtocolError,
    RequestPlan,
    StreamState,
    Style,
    error_details,
    keep_usage,
    parse_json,
    snippet,
)

if TYPE_CHECKING:
    from probes.engine.result import ProbeSpec


_MODEL_IN_PATH = re.compile(r"/models/([^/:]+):(?:streamGenerateContent|generateContent)$")


def model_in_url(url: str) -> str:
    """The model a full .../models/NAME:streamGenerateContent (or :generateContent) URL names; "" for an
    API base or any other form."""
    match = _MODEL_IN_PATH.search(urlsplit(url).path)
    return unquote(match.group(1)) if match else ""


def stream_url(url: str, model: str) -> str:
    """Accept a full :streamGenerateContent URL or an API base such as
    https://generativelanguage.googleapis.com/v1beta, and ask for SSE."""
    parts = urlsplit(url)
    path = parts.path
    if ":streamGenerateContent" not in path:
        if ":generateContent" in path:
            path = path.replace(":generateContent", ":streamGenerateContent")
        else:
            if not model:
                raise ValueError("gemini style needs a model when the URL is an API base")
            path = path.rstrip("/") + f"/models/{model}:streamGenerateContent"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "alt"]
    query.append(("alt", "sse"))
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))


class GeminiStream(Style):
    name = "gemini"

    def plan(self, spec: ProbeSpec, api_key: str | None) -> RequestPlan:
        headers = self.base_headers(spec)
        if api_key:
            headers["x-goog-api-key"] = api_key
        body = {
            "contents": [{"role": "user", "parts": [{"text": spec.prompt}]}],
            "generationConfig": {"maxOutputTokens": spec.max_tokens},
        }
        return RequestPlan("POST", stream_url(spec.url, spec.model), headers, json.dumps(body).encode())

    def on_event(self, event: SSEEvent, state: StreamState) -> None:
        state.event(event.at_ns)
        payload = parse_json(event.data)
        if not isinstance(payload, dict):
            raise ProtocolError(f"unexpected stream chunk: {snippet(event.data)}")
        if "error" in payload:
            state.upstream_error(*error_details(payload))
            return
        for cand in payload.get("candidates") or ():
            parts = ((cand.get("content") or {}).get("parts")) or ()
            for part in parts:
                if isinstance(part, dict) and (part.get("text") or part.get("functionCall")):
                    state.token(event.at_ns, answer=not part.get("thought") and "text" in part)
                    break
            if cand.get("finishReason"):
                state.terminal = True
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            # promptTokenCount counts the cached ones too (cachedContentTokenCount).
            keep_usage(
                state,
                input_tokens=usage.get("promptTokenCount"),
                cached_input_tokens=usage.get("cachedContentTokenCount"),
                reasoning_tokens=usage.get("thoughtsTokenCount"),
            )
            # Gemini counts thinking apart from the answer; both were generated.
            answer = usage.get("candidatesTokenCount")
            thoughts = usage.get("thoughtsTokenCount") or 0
            if isinstance(answer, int):
                state.usage_output_tokens = answer + (thoughts if isinstance(thoughts, int) else 0)
