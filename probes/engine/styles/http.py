"""A plain HTTP request: phases only, no tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from probes.engine.sse import SSEEvent
from probes.engine.styles.base import IDENTITY, USER_AGENT, RequestPlan, StreamState, Style

if TYPE_CHECKING:
    from probes.engine.result import ProbeSpec


class PlainHTTP(Style):
    name = "http"

    def plan(self, spec: ProbeSpec, api_key: str | None) -> RequestPlan:
        headers = {"user-agent": USER_AGENT, "accept": "*/*", "accept-encoding": IDENTITY}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        body = spec.body.encode() if spec.body else None
        method = (spec.method or ("POST" if body else "GET")).upper()
        return RequestPlan(method, spec.url, headers, body, streaming=False)

    def on_event(self, event: SSEEvent, state: StreamState) -> None:  # pragma: no cover - never streams
        raise AssertionError("plain HTTP has no stream events")
