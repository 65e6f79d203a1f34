"""The mock LLM server's HTTP/1.1 is h11's: requests are parsed and responses framed by the library,
so the server holds clients to the RFC and frames bodies as h11 does; its faults bend timing, not
framing."""

from __future__ import annotations

import ast
import json
import socket

from tests.support import ROOT

MOCKLLM = ROOT / "devtools" / "mockllm"


def raw_exchange(server, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(payload)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_an_http11_request_without_host_is_refused(mockllm):
    # RFC 9112 section 3.2: a server answers 400 to an HTTP/1.1 request that lacks Host.
    assert raw_exchange(mockllm, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert raw_exchange(mockllm, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").startswith(
        b"HTTP/1.1 200 "
    )


def test_an_http10_client_gets_a_close_delimited_stream(mockllm):
    body = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
    received = raw_exchange(
        mockllm, b"POST /v1/chat/completions?tokens=2 HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    head, _, rest = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower() and b"content-length" not in head.lower()
    assert b"connection: close" in head.lower()
    assert rest.endswith(b"data: [DONE]\n\n")


def test_no_mock_server_module_writes_http_framing_by_hand():
    """Status lines, chunk sizes and terminators come from h11, never from byte literals of ours."""
    framing = (b"HTTP/1.", b"%x\r\n", b"0\r\n\r\n")
    found = []
    for path in sorted(MOCKLLM.glob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and (body := node.body)
            and isinstance(body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, bytes | str) and id(node) not in docstrings:
                value = node.value.encode() if isinstance(node.value, str) else node.value
                found += [f"{path.name}:{node.lineno}" for marker in framing if marker in value]
    assert found == []
    assert "import h11" in (MOCKLLM / "server.py").read_text()
