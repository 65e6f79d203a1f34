"""A plain HTTP request: phases only, no tokens."""

from __future__ import annotations

from probes.engine.styles.base import IDENTITY, USER_AGENT, RequestPlan, Style


class PlainHTTP(Style):
    name = "http"

    def plan(self, spec, api_key):
        headers = {"user-agent": USER_AGENT, "accept": "*/*", "accept-encoding": IDENTITY}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        body = spec.body.encode() if spec.body else None
        method = (spec.method or ("POST" if body else "GET")).upper()
        return RequestPlan(method, spec.url, headers, body, streaming=False)

    def on_event(self, event, state):  # pragma: no cover - never streams
        raise AssertionError("plain HTTP has no stream events")
