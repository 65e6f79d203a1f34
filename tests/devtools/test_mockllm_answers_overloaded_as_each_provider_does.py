"""fault=overloaded: Anthropic's HTTP 529 overloaded_error, which its SDK raises as OverloadedError; the other styles
answer 503 with a body that says the model is overloaded, in their own error shape."""

from __future__ import annotations

import uuid

import anthropic
import httpx
import openai
import pytest

from tests.devtools.test_mockllm_anthropic_sdk import make_client as anthropic_client
from tests.devtools.test_mockllm_openai_sdk import make_client as openai_client
from tests.support import mock_log

MESSAGES = [{"role": "user", "content": "hi"}]


def test_anthropic_sdk_raises_overloaded_error_on_a_529(mockllm):
    rid = uuid.uuid4().hex
    with anthropic_client(mockllm) as client, pytest.raises(anthropic.OverloadedError) as caught:
        client.messages.create(
            model="claude-mock",
            max_tokens=10,
            messages=MESSAGES,
            extra_query={"fault": "overloaded"},
            extra_headers={"x-mock-request-id": rid},
        )
    assert caught.value.status_code == 529
    assert caught.value.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert mock_log(mockllm, rid)["status"] == 529


def test_openai_sdk_raises_a_server_error_saying_overloaded(mockllm):
    with openai_client(mockllm) as client, pytest.raises(openai.InternalServerError, match="overloaded") as caught:
        client.chat.completions.create(
            model="gpt-mock", messages=MESSAGES, stream=True, extra_query={"fault": "overloaded"}
        )
    assert caught.value.status_code == 503
    assert caught.value.body["type"] == "server_error"


@pytest.mark.parametrize(
    ("path", "field", "value"),
    [
        ("/v1/responses", "type", "server_error"),
        ("/v1beta/models/gemini-mock:generateContent", "status", "UNAVAILABLE"),
    ],
)
def test_the_other_styles_answer_503_overloaded(mockllm, path, field, value):
    response = httpx.post(mockllm.base_url + path + "?fault=overloaded", json={"model": "m", "input": "hi"})
    assert response.status_code == 503
    assert response.json()["error"][field] == value
    assert "overloaded" in response.json()["error"]["message"]


def test_an_overloaded_answer_over_http2_is_a_529_too(mockllm_h2):
    import ssl

    with httpx.Client(http2=True, verify=ssl.create_default_context(cafile=mockllm_h2.ca_pem_path)) as client:
        response = client.post(mockllm_h2.base_url + "/v1/messages?fault=overloaded", json={"model": "m"})
    assert (response.http_version, response.status_code) == ("HTTP/2", 529)
    assert response.json()["error"]["type"] == "overloaded_error"
