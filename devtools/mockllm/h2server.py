"""The mock server's HTTP/2 side: an h2 state machine over the TLS stream.

A client that picks h2 by ALPN (server built with http2=True) is served here;
each request runs the same handler as over HTTP/1.1 (MockLLMServer._respond),
with a response writer that sends HEADERS and DATA frames instead of h11
bytes. The log record is stamped as over HTTP/1.1, right before the frame
leaves: headers_sent_ns before the HEADERS frame, first_token_ns before the
DATA frame that holds the first token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

from devtools.mockllm.formats import META
from devtools.mockllm.server import MAX_BODY, READ_SIZE, _Out, _Request, _split_points, stamp_event

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from devtools.mockllm.server import MockLLMServer


class _StreamReader:
    """What the stall fault holds on: read() returns b"" once the client
    reset the stream or left, as a closed socket does over HTTP/1.1."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def read(self, n: int = -1) -> bytes:
        await self.closed.wait()
        return b""


class _H2Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        self.window = asyncio.Event()  # set whenever the client opens flow-control window
        self.streams: dict[int, _Exchange] = {}

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def send_data(self, sid: int, data: bytes, end: bool) -> None:
        """DATA frames within the peer's flow-control window and frame size."""
        while True:
            size = min(len(data), self.h2.max_outbound_frame_size, self.h2.local_flow_control_window(sid))
            if data and size <= 0:
                self.window.clear()
                await self.window.wait()
                continue
            chunk, data = data[:size], data[size:]
            self.h2.send_data(sid, chunk, end_stream=end and not data)
            await self.flush()
            if not data:
                return


class _Exchange:
    """One stream, shaped like server._Connection for the shared handler."""

    def __init__(self, conn: _H2Conn, sid: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.conn, self.sid, self.writer = conn, sid, conn.writer
        self.reader = _StreamReader()
        self.headers, self.body = headers, bytearray()
        self.too_large = False  # the body passed MAX_BODY: dropped as it comes, answered 413 at its end
        self.body_received_ns = 0

    def out(self, rec: dict[str, Any], head_only: bool = False) -> _Out:
        return _H2Out(self, rec, head_only)

    def request(self) -> _Request:
        req = _Request.__new__(_Request)
        fields: dict[str, str] = {}
        for name, value in self.headers:
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            fields[key] = fields[key] + ", " + text if key in fields else text
        req.method = fields.pop(":method", "GET")
        req.target = fields.pop(":path", "/")
        req.version = "HTTP/2"
        req.headers = {k: v for k, v in fields.items() if not k.startswith(":")}
        req.body = bytes(self.body)
        req.body_received_ns = self.body_received_ns
        req.received_ns = time.monotonic_ns()
        return req


class _H2Out(_Out):
    """Writes one response as HTTP/2 frames; stamps as _Out does."""

    def __init__(self, exchange: _Exchange, rec: dict[str, Any], head_only: bool = False) -> None:
        super().__init__(exchange, rec, head_only)  # type: ignore[arg-type]
        self.ex, self.h2conn = exchange, exchange.conn
        self.ended = False
        self.length: int | None = None

    @property
    def keep(self) -> bool:
        return True  # the connection carries other streams; each stream ends on its own

    async def head(
        self, status: int, ctype: str, length: int | None, extra: tuple[tuple[str, str], ...] = (), close: bool = False
    ) -> None:
        hdrs = [(":status", str(status)), ("content-type", ctype)]
        if length is None:
            hdrs.append(("cache-control", "no-cache"))
        elif status not in (204, 304):
            hdrs.append(("content-length", str(length)))
            self.length = length
        if self.encoding != "identity":
            hdrs.append(("content-encoding", self.encoding))
        # Connection-specific headers are forbidden in HTTP/2 (RFC 9113 8.2.2): no Connection here.
        hdrs += [("x-mock-request-id", self.rec.get("request_id", "-"))]
        hdrs += [(k.lower(), v) for k, v in extra]
        self.h2conn.h2.send_headers(self.ex.sid, [(k.encode(), v.encode("latin-1")) for k, v in hdrs])
        self.rec["status"] = status
        self.rec["headers_sent_ns"] = time.monotonic_ns()
        if self.slow_ms:
            await asyncio.sleep(self.slow_ms / 1000)  # a late HEADERS frame: frames cannot leave in pieces
        await self.h2conn.flush()

    async def body(self, data: bytes, complete: bool = True) -> None:
        self.rec["last_byte_ns"] = time.monotonic_ns()
        if self.length is not None and len(data) < self.length:
            # The truncate fault: fewer bytes than promised and no END_STREAM; _serve_stream then resets the
            # stream (RST_STREAM), what a dropped upstream behind an HTTP/2 front looks like.
            complete = False
        if complete:
            self.ended = True
            await self.h2conn.send_data(self.ex.sid, data, end=True)
        elif data:
            await self.h2conn.send_data(self.ex.sid, data, end=False)

    async def event(self, data: bytes, kind: int = META, end: bool = False) -> None:
        pieces = (
            [self.compress(data, final=end)]
            if self.encoding != "identity"
            else (_split_points(data) if self.split else [data])
        )
        stamp_event(self.rec, kind)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            if i:
                await asyncio.sleep(0.001)  # each piece its own DATA frame and segment
            if end and last:
                self.rec["last_byte_ns"] = time.monotonic_ns()
                self.ended = True
            await self.h2conn.send_data(self.ex.sid, piece, end=end and last)

    async def end(self, stamp: bool = True) -> None:
        if stamp:
            self.rec["last_byte_ns"] = time.monotonic_ns()
        if not self.ended:
            self.ended = True
            self.h2conn.h2.end_stream(self.ex.sid)
            await self.h2conn.flush()


async def _serve_stream(server: MockLLMServer, ex: _Exchange, accepted_ns: int, tls_done_ns: int | None) -> None:
    conn = ex.conn
    try:
        if ex.too_large:
            error = {"error": {"message": "request body too large", "type": "bad_request"}}
            await server._send(ex.out({}), 413, error)
            return
        keep = await server._respond(ex.request(), ex, accepted_ns, tls_done_ns)  # type: ignore[arg-type]
        if not keep:
            # What HTTP/1.1 answers by closing: a stream cut short (truncate, stall) is reset.
            with contextlib.suppress(h2.exceptions.ProtocolError):
                conn.h2.reset_stream(ex.sid, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
            await conn.flush()
    except (h2.exceptions.ProtocolError, OSError) as exc:
        # The client reset the stream or left (StreamClosedError is one of h2's ProtocolErrors): routine.
        log.debug("mockllm h2 stream %d ended: %r", ex.sid, exc)
    except Exception:  # a bug here must not pass silently, nor take the connection down
        log.exception("mockllm: unexpected error on an HTTP/2 stream")
    finally:
        conn.streams.pop(ex.sid, None)


async def serve_h2(
    server: MockLLMServer,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    accepted_ns: int,
    tls_done_ns: int | None,
) -> None:
    """Serve one HTTP/2 connection until the client leaves."""
    conn = _H2Conn(reader, writer)
    conn.h2.initiate_connection()
    await conn.flush()
    tasks: set[asyncio.Task[None]] = set()
    try:
        while True:
            data = await reader.read(READ_SIZE)
            read_ns = time.monotonic_ns()
            if not data:
                break
            try:
                events = conn.h2.receive_data(data)
            except h2.exceptions.ProtocolError:
                await conn.flush()  # h2 queued a GOAWAY saying why
                break
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    conn.streams[event.stream_id] = _Exchange(conn, event.stream_id, list(event.headers or []))
                elif isinstance(event, h2.events.DataReceived):
                    ex = conn.streams.get(event.stream_id)
                    if ex is not None and not ex.too_large:
                        ex.body += event.data or b""
                        if len(ex.body) > MAX_BODY:
                            ex.too_large, ex.body = True, bytearray()
                    conn.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    ex = conn.streams.get(event.stream_id)
                    if ex is not None:
                        ex.body_received_ns = read_ns
                        task = asyncio.create_task(_serve_stream(server, ex, accepted_ns, tls_done_ns))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                elif isinstance(event, h2.events.StreamReset):
                    ex = conn.streams.get(event.stream_id)
                    if ex is not None:
                        ex.reader.closed.set()
                elif isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
                    conn.window.set()
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return
            await conn.flush()
    finally:
        for ex in list(conn.streams.values()):
            ex.reader.closed.set()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
