"""A long prompt reaches the mock whole: a 400 KB request body (100,000 tokens) is read and counted, over HTTP/1.1
and HTTP/2, and the log stamps when its last byte arrived (body_received_ns, on the same CLOCK_MONOTONIC as the
other stamps), for checking a client's own request-sent stamp against. A body beyond the server's limit gets 413."""

from __future__ import annotations

import json
import socket
import ssl
import time
import uuid

import httpx
import pytest

from devtools.mockllm import h2server, server
from tests.support import mock_log

PROMPT = "w" * 400_000  # 100,000 tokens


def prompt_body(**extra) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": PROMPT}], **extra}


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
def test_a_400_kb_body_is_read_whole_and_counted(mockllm, mockllm_h2, http2):
    target = mockllm_h2 if http2 else mockllm
    verify = ssl.create_default_context(cafile=target.ca_pem_path) if http2 else True
    rid = uuid.uuid4().hex
    with httpx.Client(http2=http2, verify=verify, timeout=30) as client:
        before = time.monotonic_ns()
        response = client.post(
            target.base_url + "/v1/chat/completions?tokens=1",
            json=prompt_body(stream=True, stream_options={"include_usage": True}),
            headers={"x-mock-request-id": rid},
        )
    assert response.status_code == 200
    usage = json.loads(response.text.split("data: ")[-2])["usage"]
    assert usage["prompt_tokens"] == 100_000
    record = mock_log(target, rid)
    assert record["input_tokens"] == 100_000
    stamps = [record[name] for name in ("accepted_ns", "body_received_ns", "received_ns", "headers_sent_ns")]
    assert before <= stamps[0] and stamps == sorted(stamps)


GAP_NS = 200_000_000
STAMP_ERROR_NS = 20_000_000


def test_body_received_ns_is_when_the_last_byte_came_not_the_first(mockllm):
    rid = uuid.uuid4().hex
    body = json.dumps(prompt_body()).encode()
    head = (
        f"POST /v1/chat/completions?tokens=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"x-mock-request-id: {rid}\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", mockllm.port), timeout=10) as sock:
        sock.sendall(head + body[:1000])
        # A gap between the parts far wider than the error of the server's stamp (a kernel receive stamp carried
        # from the realtime clock to the monotonic one): a stamp of the first part would fall well before it.
        time.sleep(GAP_NS / 1e9)
        last_part_sent_from = time.monotonic_ns()
        sock.sendall(body[1000:])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ")
    record = mock_log(mockllm, rid)
    assert record["accepted_ns"] < last_part_sent_from
    assert last_part_sent_from - STAMP_ERROR_NS <= record["body_received_ns"] <= record["received_ns"]


def test_a_body_over_the_limit_is_refused_with_413(mockllm):
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {server.MAX_BODY + 1}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", mockllm.port), timeout=10) as sock:
        sock.sendall(head + b"{")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"too large" in answer


def test_an_http2_body_over_the_limit_is_refused_with_413(mockllm_h2, monkeypatch):
    monkeypatch.setattr(h2server, "MAX_BODY", 100_000)  # the limit, lowered so that the test sends little
    with httpx.Client(http2=True, verify=ssl.create_default_context(cafile=mockllm_h2.ca_pem_path)) as client:
        response = client.post(mockllm_h2.base_url + "/v1/chat/completions", json=prompt_body())
        assert (response.http_version, response.status_code) == ("HTTP/2", 413)
        assert "too large" in response.json()["error"]["message"]
        small = client.post(mockllm_h2.base_url + "/v1/chat/completions?tokens=1", json={"model": "m"})
    assert small.status_code == 200  # the connection serves on
