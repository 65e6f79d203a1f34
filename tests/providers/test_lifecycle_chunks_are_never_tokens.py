"""The chunks the dialects add around the tokens, read by the openai style event by event: Azure's
choice-less filter chunk, role-only chunks with content "" or null, usage-only chunks and keep-alive comments
are never tokens; usage is read wherever a dialect puts it; an error in a data: line is an upstream error."""

import json

import pytest

from probes.engine.sse import SSEComment, SSEEvent
from probes.engine.styles import STYLES, StreamState
from probes.engine.styles.base import ProtocolError

FILTERS = {"hate": {"filtered": False, "severity": "safe"}}


def run(*payloads, state=None):
    state = state or StreamState()
    for at, payload in enumerate(payloads, start=1):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        STYLES["openai"].on_event(SSEEvent("message", data, None, at), state)
    return state


def chunk(delta=None, finish=None, **extra):
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"object": "chat.completion.chunk", "choices": choices, **extra}


def test_azures_filter_chunk_and_role_chunk_are_events_but_not_tokens():
    state = run(
        {"choices": [], "id": "", "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": FILTERS}]},
        chunk({"role": "assistant", "content": ""}, content_filter_results={}),
        {"choices": [{"index": 0, "finish_reason": None, "content_filter_results": FILTERS}]},  # no delta at all
        chunk({"content": "Hi"}),
    )
    assert (state.first_event_ns, state.first_token_ns, state.first_answer_ns) == (1, 4, 4)


def test_a_null_content_role_chunk_is_not_a_token():
    state = run(chunk({"role": "assistant", "content": None}), chunk({"content": None, "reasoning_content": "so"}))
    assert (state.first_event_ns, state.first_token_ns, state.first_answer_ns) == (1, 2, None)


def test_reasoning_beside_an_empty_content_is_reasoning():
    state = run(chunk({"role": "assistant", "content": "", "reasoning": "so"}), chunk({"content": "Hi"}))
    assert (state.first_token_ns, state.first_answer_ns) == (1, 2)


def test_keep_alive_comments_are_nothing():
    state = StreamState()
    for text in ("keep-alive", "OPENROUTER PROCESSING"):
        STYLES["openai"].on_comment(SSEComment(text, 1), state)
    assert (state.first_event_ns, state.first_token_ns, state.token_times) == (None, None, [])


def test_groqs_usage_in_x_groq_is_read():
    state = run(chunk({"content": "Hi"}), chunk({}, "stop", x_groq={"id": "req_1", "usage": {"completion_tokens": 7}}))
    assert state.usage_output_tokens == 7


def test_usage_on_the_finish_chunk_and_in_a_usage_only_chunk_are_read():
    assert run(chunk({}, "stop", usage={"completion_tokens": 5})).usage_output_tokens == 5
    assert run(chunk(None, usage={"completion_tokens": 6})).usage_output_tokens == 6


def test_llamacpp_timings_count_only_when_no_usage_came():
    assert run(chunk({}, "stop", timings={"predicted_n": 4})).usage_output_tokens == 4
    state = run(chunk({}, "stop", timings={"predicted_n": 4}), chunk(None, usage={"completion_tokens": 9}))
    assert state.usage_output_tokens == 9


def test_openrouters_error_chunk_with_a_numeric_code_is_an_upstream_error():
    error = {"code": 502, "message": "Provider returned error"}
    state = run(chunk({"content": "Hi"}), chunk({"content": ""}, "error", error=error))
    assert (state.upstream_error_type, state.upstream_error_message) == ("502", "Provider returned error")
    assert state.first_answer_ns == 1


def test_a_top_level_error_object_is_an_upstream_error():
    state = run({"object": "error", "message": "boom", "type": "InternalServerError", "param": None, "code": 500})
    assert (state.upstream_error_type, state.upstream_error_message) == ("InternalServerError", "boom")


def test_a_null_error_field_is_not_an_error():
    state = run(chunk({"content": "Hi"}, error=None))
    assert not state.failed and state.first_answer_ns == 1


@pytest.mark.parametrize("choices", [["text"], [3]])
def test_a_choice_that_is_not_an_object_is_a_protocol_error(choices):
    with pytest.raises(ProtocolError):
        run({"choices": choices})
