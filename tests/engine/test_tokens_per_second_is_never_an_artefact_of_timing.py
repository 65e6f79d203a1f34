"""Tokens per second is the output rate after the first token (vLLM's
1 / TPOT), measured only over time the reads can tell apart: a stream that
arrives in a burst has no rate (None), and tokens that arrived in the same
read as the first one are not counted as generated after it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest


def test_a_stream_sent_in_one_burst_has_no_tokens_per_second(measure):
    # The whole answer leaves in one segment, so it lands in one read (the
    # server writes it at once: a busy machine cannot spread it out); (40 - 1)
    # over the microseconds between stamps used to read as ~250,000 tok/s.
    server = LateFirstRead(first=40)
    try:
        m = measure(f"http://127.0.0.1:{server.port}/v1/chat/completions")
    finally:
        server.close()
    assert m.outcome == "ok"
    assert (m.output_tokens, m.tokens_estimated) == (40, False)
    assert m.tokens_per_s is None


def sse(content: str | None = None, *, usage: int | None = None) -> bytes:
    chunk: dict = {"choices": [{"index": 0, "delta": {"content": content}}] if content else []}
    if usage is not None:
        chunk["usage"] = {"completion_tokens": usage}
    return frame(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n")


def frame(payload: bytes) -> bytes:
    """One chunk of a chunked HTTP body."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


class LateFirstRead:
    """A server whose first 30 (`first`) tokens leave in one segment (what a
    reader that came late finds waiting), then the rest of 40, one every 10 ms."""

    def __init__(self, first: int = 30) -> None:
        self.first = first
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sent: list[int] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            length = int(request.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(request.split(b"\r\n\r\n", 1)[1]) < length:
                request += conn.recv(65536)
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            conn.sendall(head + b"".join(sse(f"w{i} ") for i in range(self.first)))
            self.sent.append(time.monotonic_ns())
            for i in range(self.first, 40):
                time.sleep(0.01)
                conn.sendall(sse(f"w{i} "))
                self.sent.append(time.monotonic_ns())
            conn.sendall(sse(usage=40) + frame(b"data: [DONE]\r\n\r\n") + b"0\r\n\r\n")
            time.sleep(0.2)

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=5)


@pytest.fixture
def late_first_read() -> Iterator[LateFirstRead]:
    server = LateFirstRead()
    yield server
    server.close()


def test_tokens_read_with_the_first_token_are_not_counted_as_generated_after_it(late_first_read, measure):
    m = measure(f"http://127.0.0.1:{late_first_read.port}/v1/chat/completions")
    assert m.outcome == "ok"
    assert m.output_tokens == 40
    # 10 tokens after the first read, over the time the server took to send
    # them (its own stamps: a busy machine stretches the sleeps); counting
    # the 29 that came with the first would have made it four times faster.
    span_s = (late_first_read.sent[-1] - late_first_read.sent[0]) / 1e9
    assert m.tokens_per_s == pytest.approx(10 / span_s, rel=0.1)
