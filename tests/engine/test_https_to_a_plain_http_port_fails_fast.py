"""https:// to a port that serves plain HTTP fails at once as a TLS error that says so, instead of waiting
out the whole timeout: whether the server answers our ClientHello with an HTTP error (the mock server) or
waits for the rest of a request that never comes (a server that reads up to the blank line)."""

from __future__ import annotations

import json
import socketserver
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator

import pytest

from probes.engine.netstream import TLS_HANDSHAKE_TIMEOUT_S
from tests.support import ROOT

CALL_TIMEOUT_S = 30  # the probe's default: the time the call used to wait


class _WaitsForTheBlankLine(socketserver.StreamRequestHandler):
    """Plain HTTP that answers only a complete request head: a ClientHello never completes one."""

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")


@pytest.fixture
def patient_http_server() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _WaitsForTheBlankLine)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def probe_json(url: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "manage.py", "probe", url, "--timeout", str(CALL_TIMEOUT_S), "--json", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT_S + 30,
    )
    assert out.returncode == 1, out.stderr
    return json.loads(out.stdout)


def test_a_server_waiting_for_a_request_gets_a_tls_error_well_before_the_timeout(patient_http_server):
    port = patient_http_server
    # A working plain-HTTP server: http:// is answered.
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
        assert answer.read() == b"ok"

    result = probe_json(f"https://localhost:{port}/", "--style", "http")
    assert result["outcome"] == "tls_error", result
    assert "plain HTTP" in result["error"] and "http://" in result["error"]
    assert result["tls_ms"] is None and result["connect_ms"] is not None
    # Bounded by the handshake's own limit, far from the call's 30 s: waiting the call out would have ended as a
    # timeout, not as this TLS error.
    assert TLS_HANDSHAKE_TIMEOUT_S < CALL_TIMEOUT_S / 2
    assert result["total_ms"] < CALL_TIMEOUT_S * 1000


def test_a_server_answering_in_plain_http_is_named(mockllm, probe_url):
    url = probe_url(mockllm, "openai").replace("http://", "https://")
    result = probe_json(url, "--model", "m")
    assert result["outcome"] == "tls_error", result
    assert result["error"] == "the server answered in plain HTTP, not TLS: use http:// for this port"
    assert result["total_ms"] < CALL_TIMEOUT_S * 1000  # answered at once, not the call's timeout waited out
