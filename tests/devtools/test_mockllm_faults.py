"""The mock server's HTTP behaviour, timing knobs and faults, seen through raw httpx and sockets."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from devtools.mockllm import running_server

ROOT = Path(__file__).resolve().parents[2]  # the repository
OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
GEMINI = "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse"
BODIES = {
    OPENAI: {"model": "gpt-mock", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ANTHROPIC: {
        "model": "claude-mock",
        "stream": True,
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
    },
    GEMINI: {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
}


@pytest.fixture
def client(mockllm):
    with httpx.Client(base_url=mockllm.base_url, timeout=5) as client:
        yield client


def post(client, path, knobs=None, **kwargs):
    sep = "&" if "?" in path else "?"
    query = "&".join(f"{k}={v}" for k, v in (knobs or {}).items())
    return client.post(path + (sep + query if query else ""), json=BODIES[path], **kwargs)


def data_lines(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def server_log(client, request_id: str) -> dict:
    response = client.get(f"/_mock/log/{request_id}")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize(
    ("path", "error_type"),
    [
        (OPENAI, ("error", "type", "requests")),
        (ANTHROPIC, ("error", "type", "rate_limit_error")),
        (GEMINI, ("error", "status", "RESOURCE_EXHAUSTED")),
    ],
)
def test_429_carries_retry_after_and_the_provider_error_type(client, path, error_type):
    response = post(client, path, {"fault": "429"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    outer, field, value = error_type
    assert response.json()[outer][field] == value


@pytest.mark.parametrize(
    ("path", "error_type"),
    [
        (OPENAI, ("error", "type", "server_error")),
        (ANTHROPIC, ("error", "type", "api_error")),
        (GEMINI, ("error", "status", "INTERNAL")),
    ],
)
def test_500_carries_the_provider_error_type(client, path, error_type):
    response = post(client, path, {"fault": "500"})
    assert response.status_code == 500
    outer, field, value = error_type
    assert response.json()[outer][field] == value


@pytest.mark.parametrize(
    ("path", "terminal"),
    [
        (OPENAI, "[DONE]"),
        (ANTHROPIC, '"message_stop"'),
        (GEMINI, '"finishReason"'),
    ],
)
def test_truncate_ends_the_body_cleanly_without_the_terminal_event(client, path, terminal):
    complete = post(client, path, {"tokens": 6})
    assert terminal in complete.text
    truncated = post(client, path, {"tokens": 6, "fault": "truncate"})
    assert truncated.status_code == 200
    assert terminal not in truncated.text
    assert "mock server" not in truncated.text  # tokens 4 and 5 never came
    assert "the" in truncated.text


@pytest.mark.parametrize(
    ("path", "marker"),
    [
        (OPENAI, '"server_error"'),
        (ANTHROPIC, "event: error"),
        (GEMINI, '"UNAVAILABLE"'),
    ],
)
def test_error_mid_sends_an_error_event_then_ends_the_stream_cleanly(client, path, marker):
    response = post(client, path, {"tokens": 4, "fault": "error_mid"})
    assert response.status_code == 200
    assert marker in response.text
    assert json.loads(data_lines(response.text)[-1])["error"]
    assert post(client, path, {"tokens": 1}).status_code == 200  # the connection stays usable


def test_malformed_sends_non_json_data_after_the_first_token(client):
    lines = data_lines(post(client, OPENAI, {"tokens": 3, "fault": "malformed"}).text)
    assert lines[2] == '{"choices": [tru'
    assert json.loads(lines[1])["choices"][0]["delta"]["content"] == "Hello"
    assert lines[-1] == "[DONE]"


def test_stall_holds_the_stream_open_after_half_the_tokens(client):
    rid = uuid.uuid4().hex
    with (
        pytest.raises(httpx.ReadTimeout),
        client.stream(
            "POST",
            OPENAI + "?tokens=4&fault=stall",
            json=BODIES[OPENAI],
            headers={"x-mock-request-id": rid},
            timeout=httpx.Timeout(5, read=0.3),
        ) as response,
    ):
        for _ in response.iter_bytes():
            pass
    record = server_log(client, rid)
    assert record["first_answer_ns"] is not None and record["last_byte_ns"] is None


def test_stall_gives_up_after_stall_s_and_drops_the_connection(client):
    with pytest.raises(httpx.RemoteProtocolError):
        post(client, OPENAI, {"tokens": 4, "fault": "stall", "stall_s": 0.1})


def test_slow_headers_dribbles_the_header_lines(client):
    start = time.monotonic()
    response = client.get("/health?fault=slow_headers&slow_headers_ms=40")
    assert response.status_code == 200
    assert time.monotonic() - start >= 4 * 0.040  # at least Content-Type, Length, request id, Connection


def test_fault_rate_zero_never_applies_the_fault(client):
    assert all(post(client, OPENAI, {"fault": "500", "fault_rate": 0}).status_code == 200 for _ in range(5))


def test_log_endpoint_returns_increasing_timestamps(client):
    rid = uuid.uuid4().hex
    response = post(
        client, OPENAI, {"tokens": 3, "reasoning_tokens": 2, "gap_ms": 2}, headers={"x-mock-request-id": rid}
    )
    assert response.headers["x-mock-request-id"] == rid
    record = server_log(client, rid)
    names = [
        "accepted_ns",
        "received_ns",
        "headers_sent_ns",
        "first_event_ns",
        "first_token_ns",
        "first_answer_ns",
        "last_byte_ns",
    ]
    stamps = [record[name] for name in names]
    assert stamps == sorted(stamps) and stamps[0] > 0
    assert record["first_answer_ns"] - record["first_token_ns"] >= 2 * 2_000_000  # two reasoning tokens first
    assert client.get("/_mock/log/never-seen").status_code == 404


def test_headers_delay_and_ttft_are_honoured(client):
    rid = uuid.uuid4().hex
    with client.stream(
        "POST",
        OPENAI + "?headers_delay_ms=80&ttft_ms=120&tokens=2",
        json=BODIES[OPENAI],
        headers={"x-mock-request-id": rid},
    ) as response:
        headers_at = time.monotonic_ns()
        first_token_at = None
        for line in response.iter_lines():
            if first_token_at is None and '"content":"Hello"' in line:
                first_token_at = time.monotonic_ns()
    record = server_log(client, rid)
    # Server side: each delay happened where it should (a sleep only overshoots, so these are lower bounds),
    # and in the order of the stamps: the headers' delay before the headers, the wait for the first token after
    # the first event.
    assert record["headers_sent_ns"] - record["received_ns"] >= 80e6
    assert record["first_token_ns"] - record["first_event_ns"] >= 120e6
    assert record["headers_sent_ns"] <= record["first_event_ns"]
    # Client side, on the same CLOCK_MONOTONIC: each arrives after its server stamp, and the headers
    # were not held back until the first token (they arrive before the server sends it).
    assert record["headers_sent_ns"] <= headers_at < record["first_token_ns"]
    assert record["first_token_ns"] <= first_token_at


def test_header_knob_beats_query_which_beats_server_defaults(client):
    response = post(client, OPENAI, {"tokens": 5}, headers={"x-mock-tokens": "1"})
    assert len([x for x in data_lines(response.text) if '"content":"' in x]) == 2  # role chunk + one token
    with running_server(defaults={"tokens": 2}) as server:
        text = httpx.post(server.base_url + OPENAI, json=BODIES[OPENAI]).text
        assert len([x for x in data_lines(text) if '"content":"' in x]) == 3


@pytest.mark.parametrize(("where", "knob"), [("query", "ttft_ms"), ("header", "tokens"), ("header", "no_such_knob")])
def test_a_bad_knob_is_refused_with_400_naming_it(client, where, knob):
    if where == "query":
        response = client.post(OPENAI + f"?{knob}=soon", json=BODIES[OPENAI])
    else:
        response = post(client, OPENAI, headers={"x-mock-" + knob.replace("_", "-"): "-3"})
    assert response.status_code == 400
    assert knob in response.json()["error"]["message"]
    assert response.json()["error"]["knob"] == knob


def test_gemini_stream_marks_thoughts_and_ends_with_usage(client):
    chunks = [json.loads(x) for x in data_lines(post(client, GEMINI, {"tokens": 2, "reasoning_tokens": 3}).text)]
    parts = [c["candidates"][0]["content"]["parts"][0] for c in chunks]
    assert [p.get("thought", False) for p in parts] == [True, True, True, False, False]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    usage = chunks[-1]["usageMetadata"]
    assert (usage["candidatesTokenCount"], usage["thoughtsTokenCount"]) == (2, 3)
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + 5
    assert "usageMetadata" not in json.loads(data_lines(post(client, GEMINI, {"usage": 0}).text)[-1])


def test_plain_endpoints_answer_get_head_and_honour_status_and_body_bytes(client):
    assert client.get("/health").json() == {"status": "ok"}
    padded = client.get("/?status=503&body_bytes=500")
    assert (padded.status_code, len(padded.content), padded.json()["status"]) == (503, 500, "ok")
    head = client.head("/health?body_bytes=300")
    assert head.headers["content-length"] == "300" and head.content == b""
    assert client.put("/health").status_code == 405


def test_cold_start_delays_the_first_token_only_when_the_model_was_idle(client):
    rid1, rid2 = uuid.uuid4().hex, uuid.uuid4().hex
    model = "cold-" + rid1
    knobs = "?cold_start_after_s=60&cold_start_ms=100&tokens=1"
    for rid in (rid1, rid2):
        client.post(OPENAI + knobs, json={**BODIES[OPENAI], "model": model}, headers={"x-mock-request-id": rid})
    cold, warm = server_log(client, rid1), server_log(client, rid2)
    cold_wait = cold["first_token_ns"] - cold["first_event_ns"]
    assert cold_wait >= 100e6
    # The warm call's wait is compared with the cold one's in the same run: without the cold start it is shorter.
    assert warm["first_token_ns"] - warm["first_event_ns"] < cold_wait


def raw_exchange(server, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(payload)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_keep_alive_serves_many_requests_and_connection_close_ends_it(mockllm):
    request = b"GET /health HTTP/1.1\r\nHost: x\r\nx-mock-request-id: %s\r\n%s\r\n"
    ids = [uuid.uuid4().hex.encode() for _ in range(3)]
    payload = request % (ids[0], b"") + request % (ids[1], b"") + request % (ids[2], b"Connection: close\r\n")
    received = raw_exchange(mockllm, payload)  # returns only because the server closed after the third
    assert received.count(b"HTTP/1.1 200 OK") == 3
    assert received.rstrip().endswith(b'{"status":"ok"}')
    with httpx.Client(base_url=mockllm.base_url) as client:
        accepted = {server_log(client, rid.decode())["accepted_ns"] for rid in ids}
    assert len(accepted) == 1


@pytest.mark.parametrize(
    "garbage",
    [
        b"NONSENSE\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: twelve\r\n\r\n",
        b"GET / HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",
    ],
)
def test_malformed_http_gets_400_and_the_connection_closes(mockllm, garbage):
    assert raw_exchange(mockllm, garbage).startswith(b"HTTP/1.1 400 ")
    assert httpx.get(mockllm.base_url + "/health").status_code == 200


def test_split_writes_cut_inside_utf8_characters_and_between_cr_and_lf(mockllm):
    body = json.dumps(BODIES[OPENAI]).encode()
    received = raw_exchange(
        mockllm,
        b"POST /v1/chat/completions?split=1&crlf=1&tokens=3 HTTP/1.1\r\nHost: x\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body),
    )
    rest = received.split(b"\r\n\r\n", 1)[1]
    pieces = []
    while (size := int(rest.split(b"\r\n", 1)[0], 16)) > 0:
        start = rest.index(b"\r\n") + 2
        pieces.append(rest[start : start + size])
        rest = rest[start + size + 2 :]
    assert any(p.endswith(b"\r") for p in pieces)
    assert any(p[-1] >= 0xC0 for p in pieces)  # ends on a UTF-8 lead byte: a character cut in two
    text = b"".join(pieces).decode()
    assert '"content":"héllo"' in text and '"content":" 日本"' in text and text.endswith("[DONE]\r\n\r\n")


def test_a_client_leaving_mid_stream_does_not_disturb_the_server(mockllm):
    with httpx.Client(base_url=mockllm.base_url) as client:
        with client.stream("POST", OPENAI + "?tokens=50&gap_ms=5", json=BODIES[OPENAI]) as response:
            next(response.iter_lines())
        assert post(client, OPENAI, {"tokens": 1}).status_code == 200


def start_command(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "devtools.mockllm", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_management_command_serves_and_exits_cleanly_on_sigterm(tmp_path):
    ca = tmp_path / "ca.pem"
    process = start_command("--port", "0", "--tls", "--ca-out", str(ca), "--tokens", "2")
    try:
        line = process.stdout.readline()
        base_url = re.search(r"https://localhost:\d+", line).group(0)
        assert str(ca) in line
        with httpx.Client(verify=ssl.create_default_context(cafile=str(ca))) as client:
            assert client.get(base_url + "/health").json() == {"status": "ok"}
            text = client.post(base_url + OPENAI, json=BODIES[OPENAI]).text
            assert len([x for x in data_lines(text) if '"content":"' in x]) == 3
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert "Traceback" not in process.stderr.read()
    finally:
        process.kill()
        process.wait()


def test_management_command_reports_a_port_in_use():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = start_command("--port", str(taken.getsockname()[1]))
        _, stderr = process.communicate(timeout=30)
    assert process.returncode != 0
    assert "already in use" in stderr and "Traceback" not in stderr
