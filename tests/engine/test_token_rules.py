"""What counts as a token, per style: bookkeeping events never stop TTFT."""

import json

from probes.engine.sse import SSEEvent
from probes.engine.styles import STYLES, StreamState


def run(style, events):
    state = StreamState()
    for at, (name, payload) in enumerate(events, start=1):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        STYLES[style].on_event(SSEEvent(name, data, None, at), state)
    return state


def test_openai_role_only_and_empty_deltas_are_not_tokens():
    state = run(
        "openai",
        [
            ("message", {"choices": [{"delta": {"role": "assistant", "content": ""}}]}),
            ("message", {"choices": [{"delta": {"content": ""}}]}),
            ("message", {"choices": [{"delta": {"reasoning_content": "hmm"}}]}),
            ("message", {"choices": [{"delta": {"content": "Hi"}}]}),
            ("message", {"choices": [], "usage": {"completion_tokens": 9}}),
            ("message", "[DONE]"),
        ],
    )
    assert (state.first_event_ns, state.first_token_ns, state.first_answer_ns) == (1, 3, 4)
    assert state.usage_output_tokens == 9 and state.terminal


def test_openai_error_chunk_is_an_upstream_error():
    state = run("openai", [("message", {"error": {"message": "boom", "type": "server_error"}})])
    assert state.failed and state.upstream_error_type == "server_error"


def test_anthropic_bookkeeping_events_are_not_tokens():
    state = run(
        "anthropic",
        [
            ("message_start", {"type": "message_start", "message": {"usage": {"output_tokens": 1}}}),
            ("ping", {"type": "ping"}),
            ("content_block_start", {"type": "content_block_start", "content_block": {"type": "thinking"}}),
            (
                "content_block_delta",
                {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "x"}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "delta": {"type": "signature_delta", "signature": "s"}},
            ),
            ("content_block_delta", {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hi"}}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 3}}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 12}}),
            ("message_stop", {"type": "message_stop"}),
        ],
    )
    assert (state.first_event_ns, state.first_token_ns, state.first_answer_ns) == (1, 4, 6)
    assert state.usage_output_tokens == 12, "Anthropic usage is cumulative: the last one wins"
    assert state.terminal


def test_anthropic_overloaded_error_event_is_upstream_error():
    state = run(
        "anthropic", [("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})]
    )
    assert state.upstream_error_type == "overloaded_error"


def test_gemini_thought_parts_are_tokens_but_not_answer():
    state = run(
        "gemini",
        [
            ("message", {"candidates": [{"content": {"parts": [{"text": "think", "thought": True}]}}]}),
            ("message", {"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}),
            (
                "message",
                {
                    "candidates": [{"content": {"parts": [{"text": "!"}]}, "finishReason": "STOP"}],
                    "usageMetadata": {"candidatesTokenCount": 5, "thoughtsTokenCount": 4},
                },
            ),
        ],
    )
    assert (state.first_token_ns, state.first_answer_ns) == (1, 2)
    assert state.usage_output_tokens == 9 and state.terminal
