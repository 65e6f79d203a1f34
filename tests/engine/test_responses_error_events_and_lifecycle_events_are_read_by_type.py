"""Responses API events as the style reads them: lifecycle events and empty
deltas are never tokens, an `error` event (code and message at the top level)
and response.failed are upstream errors, only completed or incomplete ends
the stream."""

import json

from probes.engine.sse import SSEEvent
from probes.engine.styles import STYLES, StreamState


def run(events):
    state = StreamState()
    for at, payload in enumerate(events, start=1):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        STYLES["responses"].on_event(SSEEvent(json.loads(data).get("type", "message"), data, None, at), state)
    return state


LIFECYCLE = [
    {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
    {"type": "response.in_progress", "response": {"id": "r", "status": "in_progress"}},
    {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "content": []}},
    {"type": "response.content_part.added", "output_index": 0, "content_index": 0, "part": {"text": ""}},
    {"type": "response.output_text.delta", "delta": ""},
]


def test_lifecycle_events_and_empty_deltas_are_not_tokens():
    state = run(
        [
            *LIFECYCLE,
            {"type": "response.reasoning_text.delta", "delta": "hmm"},
            {"type": "response.output_text.delta", "delta": "Hi"},
            {"type": "response.output_text.done", "text": "Hi"},
            {"type": "response.completed", "response": {"usage": {"output_tokens": 4}}},
        ]
    )
    assert (state.first_event_ns, state.first_token_ns, state.first_answer_ns) == (1, 6, 7)
    assert state.usage_output_tokens == 4 and state.terminal and not state.failed


def test_an_error_event_is_an_upstream_error_with_its_code():
    state = run([*LIFECYCLE, {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}])
    assert state.failed and not state.terminal
    assert (state.upstream_error_type, state.upstream_error_message) == ("rate_limit_exceeded", "slow down")


def test_a_failed_response_is_an_upstream_error():
    failed = {"status": "failed", "error": {"code": "server_error", "message": "boom"}}
    state = run(
        [
            *LIFECYCLE,
            {"type": "response.output_text.delta", "delta": "Hi"},
            {"type": "response.failed", "response": failed},
        ]
    )
    assert state.failed and state.first_answer_ns == 6
    assert (state.upstream_error_type, state.upstream_error_message) == ("server_error", "boom")


def test_incomplete_ends_the_stream_with_its_usage():
    incomplete = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "usage": {"output_tokens": 3},
    }
    state = run([*LIFECYCLE, {"type": "response.incomplete", "response": incomplete}])
    assert state.terminal and not state.failed and state.usage_output_tokens == 3
