"""With http2, the TLS mock server offers h2 by ALPN and serves the same
formats over HTTP/2; real clients (httpx, the official openai SDK) read it."""

from __future__ import annotations

import ssl

import httpx
import httpx2  # the openai SDK is built on httpx2 and refuses httpx clients
import openai
import pytest

from tests.support import mock_log


def test_an_http2_client_gets_http2_and_the_stream(mockllm_h2):
    ctx = ssl.create_default_context(cafile=mockllm_h2.ca_pem_path)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with httpx.Client(http2=True, verify=ctx) as client:
        url = mockllm_h2.base_url + "/v1/chat/completions?tokens=4"
        with client.stream("POST", url, json=body, headers={"x-mock-request-id": "h2-stream"}) as response:
            text = response.read().decode()
    assert response.http_version == "HTTP/2" and response.status_code == 200
    assert text.count("data: ") == 7 and text.rstrip().endswith("data: [DONE]")
    log = mock_log(mockllm_h2, "h2-stream")
    assert log["headers_sent_ns"] <= log["first_token_ns"] <= log["last_byte_ns"]


def test_an_http11_client_is_still_served_http11(mockllm_h2):
    ctx = ssl.create_default_context(cafile=mockllm_h2.ca_pem_path)
    with httpx.Client(verify=ctx) as client:
        response = client.get(mockllm_h2.base_url + "/health")
    assert (response.http_version, response.status_code) == ("HTTP/1.1", 200)


def test_the_mock_without_http2_refuses_h2(mockllm_tls):
    ctx = ssl.create_default_context(cafile=mockllm_tls.ca_pem_path)
    with httpx.Client(http2=True, verify=ctx) as client:
        response = client.get(mockllm_tls.base_url + "/health")
    assert response.http_version == "HTTP/1.1"


def test_the_openai_sdk_reads_the_stream_over_http2(mockllm_h2):
    http_client = httpx2.Client(http2=True, verify=ssl.create_default_context(cafile=mockllm_h2.ca_pem_path))
    client = openai.OpenAI(base_url=mockllm_h2.base_url + "/v1", api_key="t", max_retries=0, http_client=http_client)
    stream = client.chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": "hi"}], stream=True, extra_query={"tokens": 5}
    )
    content = "".join(choice.delta.content or "" for chunk in stream for choice in chunk.choices)
    assert content
    http_client.close()


@pytest.mark.parametrize("fault", ["500", "429"])
def test_error_answers_go_out_as_http2(mockllm_h2, fault):
    ctx = ssl.create_default_context(cafile=mockllm_h2.ca_pem_path)
    with httpx.Client(http2=True, verify=ctx) as client:
        response = client.post(mockllm_h2.base_url + f"/v1/chat/completions?fault={fault}", json={"model": "m"})
    assert response.http_version == "HTTP/2" and response.status_code == int(fault)
    assert response.json()["error"]
