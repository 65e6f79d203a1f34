"""The official openai SDK's Responses streaming helper reads the mock's
/v1/responses stream without error, and gets the text, reasoning summary and
usage the mock sent (plain and TLS)."""

from __future__ import annotations

import ssl

import httpx2  # the openai SDK is built on httpx2 and refuses httpx clients
import openai
import pytest


def make_client(server) -> openai.OpenAI:
    http_client = None
    if server.ca_pem_path:
        http_client = httpx2.Client(verify=ssl.create_default_context(cafile=server.ca_pem_path))
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0, http_client=http_client)


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_responses_stream_gives_text_reasoning_and_usage(mockllm, mockllm_tls, tls):
    server = mockllm_tls if tls else mockllm
    with make_client(server) as client:
        knobs = {"tokens": 5, "reasoning_tokens": 3, "split": 1}
        with client.responses.stream(model="gpt-mock", input="Say hello", extra_query=knobs) as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == "héllo 日本 naïve café 🚀"
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert final.output[0].summary[0].text == "Hmm ça 思考"
    assert (final.usage.output_tokens, final.usage.output_tokens_details.reasoning_tokens) == (8, 3)
    assert final.usage.total_tokens == final.usage.input_tokens + 8


def test_responses_create_stream_ends_incomplete_at_max_output_tokens(mockllm):
    with make_client(mockllm) as client:
        events = list(client.responses.create(model="gpt-mock", input="hi", max_output_tokens=2, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    last = events[-1]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details.reason == "max_output_tokens"
    assert last.response.usage.output_tokens == 2


def test_a_failed_event_reaches_the_sdk_as_the_failed_response(mockllm):
    with make_client(mockllm) as client:
        stream = client.responses.create(model="gpt-mock", input="hi", stream=True, extra_query={"fault": "error_mid"})
        events = list(stream)
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "server_error"


def test_a_non_streamed_response_has_the_same_text_and_usage(mockllm):
    with make_client(mockllm) as client:
        response = client.responses.create(model="gpt-mock", input="hi", extra_query={"tokens": 3})
    assert response.output_text == "Hello from the"
    assert response.usage.output_tokens == 3
