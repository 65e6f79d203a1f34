"""The mock LLM API server: HTTP/1.1 on h11, with the timing and faults its knobs ask for.

It speaks the OpenAI Chat Completions and Responses, Anthropic Messages and Gemini generateContent wire formats
(formats.py) well enough for the official SDKs and our probes, over real sockets with optional TLS.
Timing and failures are driven by knobs (knobs.py), so a test can ask for a 300 ms time to first
token or a stream that dies half way, then compare what its client measured with the server-side
timestamps at GET /_mock/log/{request_id}. They are time.monotonic_ns(): CLOCK_MONOTONIC is shared by
all processes on Linux, so a client in another process can subtract them from its own readings. Each
stamp is taken right before its bytes are written, after h11 has framed them.

h11 parses requests (keep-alive, pipelining, HTTP/1.0) and frames responses (Content-Length, chunked,
or close-delimited for HTTP/1.0 clients), so none of that is code of ours. The faults stay within
well-formed HTTP as h11 writes it: a truncated body is h11's framing with the connection closed
early; slow headers are h11's own head bytes written line by line (_write_head_slowly).

Development tooling (tests, benchmarks, the demo), never imported by the app packages.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import itertools
import json
import logging
import os
import random
import re
import shutil
import signal
import socket
import ssl
import tempfile
import threading
import time
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import h11

from devtools.mockllm.dialects import AZURE_PATH, http_error_body, make_format, refusal
from devtools.mockllm.formats import (
    ANSWER,
    COMMENT,
    HALF,
    META,
    SERVER_ERROR,
    TOKEN,
    WAIT,
    _Anthropic,
    _dumps,
    _Gemini,
    _OpenAI,
    _Responses,
    error_body,
)
from devtools.mockllm.knobs import (
    MID_FAULTS,
    KnobError,
    credential_record,
    echo_text,
    parse_knob,
    resolve_knobs,
    slowed_for_region,
)
from devtools.mockllm.workloads import (
    Headroom,
    PromptCache,
    RateLimiter,
    count_tokens,
    fault_headroom,
    overloaded,
    prefill_ms,
    prompt_text,
    rate_limited,
    ratelimit_headers,
)

log = logging.getLogger(__name__)

LOG_CAPACITY = 10_000
# Room for a long prompt: a 100k-token one is a few hundred kilobytes of JSON. Longer bodies get 413.
MAX_BODY = 16 * 1024 * 1024
LINE_LIMIT = 64 * 1024  # the longest request head we accept
READ_SIZE = 65536
IDLE_TIMEOUT_S = 120.0
_REASONS = {status.value: status.phrase.encode() for status in http.HTTPStatus} | {529: b"Overloaded"}
_PATH_STYLES = {"/v1/chat/completions": "openai", "/v1/responses": "responses", "/v1/messages": "anthropic"}
_GEMINI_RE = re.compile(r"/v1(?:beta|alpha)?/models/([^/:]+):(streamGenerateContent|generateContent)")


def stamp_event(rec: dict[str, Any], kind: int) -> None:
    """The log's first-event, first-token and first-answer stamps of a stream, taken right before the event's
    first write (HTTP/1.1 and HTTP/2 alike), each only the first time."""
    if kind == COMMENT:  # no event: a client's first event is still to come
        return
    now = time.monotonic_ns()
    for key, applies in (
        ("first_event_ns", True),
        ("first_token_ns", kind in (TOKEN, ANSWER)),
        ("first_answer_ns", kind == ANSWER),
    ):
        if applies and rec.get(key) is None:
            rec[key] = now


def _split_points(data: bytes) -> list[bytes]:
    """Cut one SSE event at the places incremental parsers get wrong."""
    cuts = {3}  # inside the field name, before a parser has seen the colon
    for i in range(1, len(data)):
        if data[i - 1] >= 0xC0 or (data[i - 1] == 0x0D and data[i] == 0x0A):
            cuts.add(i)
    edges = [0, *sorted(c for c in cuts if 0 < c < len(data)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


class _BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _Request:
    def __init__(self, event: h11.Request, body: bytes, body_received_ns: int) -> None:
        self.method = event.method.decode("ascii")
        self.target = event.target.decode("latin-1")
        self.version = "HTTP/" + event.http_version.decode("ascii")
        headers: dict[str, str] = {}
        for name, value in event.headers:  # h11 gives lower-case names
            key, text = name.decode("latin-1"), value.decode("latin-1")
            headers[key] = headers[key] + ", " + text if key in headers else text
        self.headers, self.body = headers, body
        # When the read that brought the request's last byte returned; received_ns comes after h11 parsed it all.
        self.body_received_ns = body_received_ns
        self.received_ns = time.monotonic_ns()


class _Connection:
    """One client connection: h11 state plus the socket streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=LINE_LIMIT)
        self.read_ns = time.monotonic_ns()

    async def _next_event(self) -> Any:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                # 400 for every malformed head, an over-long one included (h11 suggests 431): what clients
                # and the tests have always been told.
                raise _BadRequest(f"malformed request: {exc}") from None
            if event is not h11.NEED_DATA:
                return event
            data = await self.reader.read(READ_SIZE)
            self.read_ns = time.monotonic_ns()
            self.h11.receive_data(data)

    async def read_request(self) -> _Request | None:
        """Read one request; None when the client closed between requests."""
        event = await self._next_event()
        if isinstance(event, h11.ConnectionClosed):
            return None
        if not isinstance(event, h11.Request):  # pragma: no cover - h11 yields a Request first
            raise _BadRequest("expected a request")
        names = {name for name, _ in event.headers}
        if b"transfer-encoding" in names:
            raise _BadRequest("request bodies must use Content-Length", 411)
        length = next((int(v) for n, v in event.headers if n == b"content-length"), 0)  # h11 checked the digits
        if length > MAX_BODY:
            raise _BadRequest("request body too large", 413)
        body = bytearray()
        while not isinstance(data := await self._next_event(), h11.EndOfMessage):
            if isinstance(data, h11.ConnectionClosed):
                raise _BadRequest("incomplete request body")
            body += data.data
        return _Request(event, bytes(body), self.read_ns)

    def out(self, rec: dict[str, Any], head_only: bool = False) -> _Out:
        """The response writer for this connection (the HTTP/2 server has its own)."""
        return _Out(self, rec, head_only)

    def next_cycle(self) -> bool:
        """True when the connection may carry another request (both sides done, keep-alive)."""
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            return True
        return False


async def _write_head_slowly(writer: asyncio.StreamWriter, head: bytes, delay_s: float) -> None:
    """The slow_headers fault: h11's response head, written one header line at a time with a pause
    before each (a server stuck between headers). h11 only ever emits a whole head, so this cuts its
    bytes at line ends; the bytes themselves are h11's, only their timing is ours."""
    status_line, _, rest = head.partition(b"\r\n")
    lines = [line + b"\r\n" for line in rest[:-4].split(b"\r\n")] if rest[:-4] else []
    if lines:
        lines[-1] += b"\r\n"
    writer.write(status_line + b"\r\n")
    await writer.drain()
    for line in lines or [b"\r\n"]:
        await asyncio.sleep(delay_s)
        writer.write(line)
        await writer.drain()


class _Out:
    """Writes one response through h11 and stamps the log record right before bytes leave."""

    def __init__(self, conn: _Connection, rec: dict[str, Any], head_only: bool = False) -> None:
        self.conn, self.writer, self.rec = conn, conn.writer, rec
        self.head_only = head_only
        self.split, self.slow_ms = False, 0.0
        self.encoding = "identity"
        self._compressor: Any = None

    @property
    def keep(self) -> bool:
        return self.conn.next_cycle()

    def compress(self, data: bytes, final: bool = True) -> bytes:
        """Whole bodies at once; stream events one by one, each flushed so that the client can decode it on
        arrival, as a compressing server that streams does."""
        if self.encoding == "identity":
            return data
        if self._compressor is None:
            self._compressor = zlib.compressobj(wbits=31 if self.encoding == "gzip" else 15)
        return self._compressor.compress(data) + self._compressor.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)

    async def _write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def head(
        self, status: int, ctype: str, length: int | None, extra: tuple[tuple[str, str], ...] = (), close: bool = False
    ) -> None:
        """length None means a stream: h11 frames it chunked, or close-delimited for an HTTP/1.0 client."""
        hdrs = [("Content-Type", ctype)]
        if length is None:
            hdrs.append(("Cache-Control", "no-cache"))
        elif status not in (204, 304):
            hdrs.append(("Content-Length", str(length)))
        if self.encoding != "identity":
            hdrs.append(("Content-Encoding", self.encoding))
        # h11 turns keep-alive into close when the request or the framing rules it out.
        hdrs += [
            ("x-mock-request-id", self.rec.get("request_id", "-")),
            *extra,
            ("Connection", "close" if close else "keep-alive"),
        ]
        data = self.conn.h11.send(
            h11.Response(
                status_code=status,
                reason=_REASONS.get(status, b"Unknown"),
                headers=[(k.encode("latin-1"), v.encode("latin-1")) for k, v in hdrs],
            )
        )
        self.rec["status"] = status
        self.rec["headers_sent_ns"] = time.monotonic_ns()
        if self.slow_ms:
            await _write_head_slowly(self.writer, data, self.slow_ms / 1000)
        else:
            await self._write(data)

    async def body(self, data: bytes, complete: bool = True) -> None:
        """complete=False sends fewer bytes than promised and no end: the truncate fault."""
        frame = self.conn.h11.send(h11.Data(data=data)) if data else b""
        if complete:
            frame += self.conn.h11.send(h11.EndOfMessage())
        self.rec["last_byte_ns"] = time.monotonic_ns()
        await self._write(frame)

    async def event(self, data: bytes, kind: int = META, end: bool = False) -> None:
        if self.encoding != "identity":
            pieces = [self.compress(data, final=end)]
        else:
            pieces = _split_points(data) if self.split else [data]
        # Framed (by h11) before the stamps, so that the stamps are taken right before the first write.
        frames = [self.conn.h11.send(h11.Data(data=piece)) for piece in pieces]
        if end:
            # The terminator rides with the last event: a client sees the end as soon as the last event.
            frames[-1] += self.conn.h11.send(h11.EndOfMessage())
        stamp_event(self.rec, kind)
        for i, frame in enumerate(frames):
            if i:
                # Let each piece leave as its own TCP segment (TCP_NODELAY) instead of coalescing.
                await asyncio.sleep(0.001)
            if end and i == len(frames) - 1:
                self.rec["last_byte_ns"] = time.monotonic_ns()
            await self._write(frame)

    async def end(self, stamp: bool = True) -> None:
        frame = self.conn.h11.send(h11.EndOfMessage())
        if stamp:
            self.rec["last_byte_ns"] = time.monotonic_ns()
        if frame:
            await self._write(frame)


class MockLLMServer:
    """The server; start() and stop() must run on the same event loop."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: bool = False,
        defaults: dict[str, Any] | None = None,
        http2: bool = False,
        ca_dir: str | None = None,
    ) -> None:
        self.host, self._requested_port, self.tls = host, port, tls
        # Where the CA's folder is made (a temporary one when None): a probe worker trusts only bundles inside
        # its LATENCY_CA_DIR, so a test server's CA goes inside the one its workers are given.
        self._ca_dir = ca_dir
        # With TLS: offer h2 by ALPN as well and speak it to clients that pick it (h2server.py).
        self.http2 = http2 and tls
        # Parsed now so that a bad default fails at startup, not on the first request.
        self.defaults = {name: parse_knob(name, raw) for name, raw in (defaults or {}).items()}
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._log: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._last_served: dict[str, float] = {}
        self._cache, self._limiter = PromptCache(), RateLimiter()
        self._random = random.Random()
        self._ssl: ssl.SSLContext | None = None
        self._tmpdir: str | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    @property
    def base_url(self) -> str:
        if self.tls:  # a name, so that the certificate matches and the client has a DNS phase to time
            return f"https://localhost:{self.port}"
        return f"http://{f'[{self.host}]' if ':' in self.host else self.host}:{self.port}"

    @property
    def ca_pem_path(self) -> str | None:
        return os.path.join(self._tmpdir, "mockllm-ca.pem") if self._tmpdir else None

    def log_record(self, request_id: str) -> dict[str, Any] | None:
        return self._log.get(request_id)

    async def start(self) -> None:
        if self.tls:
            import trustme  # imported late: plain HTTP users need not have it

            ca = trustme.CA()
            self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ca.issue_cert("localhost", "127.0.0.1", "::1").configure_cert(self._ssl)
            # HTTP/1.1 only unless built with http2: a client must never pick h2 from a server that refuses it.
            self._ssl.set_alpn_protocols(["h2", "http/1.1"] if self.http2 else ["http/1.1"])
            self._tmpdir = tempfile.mkdtemp(prefix="mockllm-", dir=self._ca_dir)
            ca.cert_pem.write_to_path(self.ca_pem_path)
        try:
            server = await asyncio.start_server(self._on_connect, self.host, self._requested_port, limit=LINE_LIMIT)
        except BaseException:
            self._cleanup_tmp()
            raise
        self._servers.append(server)
        self._port = server.sockets[0].getsockname()[1]
        if self.tls and self.host == "127.0.0.1":
            # "localhost" resolves to ::1 first on some systems; answer there too when the port is free.
            with contextlib.suppress(OSError):
                self._servers.append(await asyncio.start_server(self._on_connect, "::1", self._port, limit=LINE_LIMIT))

    async def stop(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
        self._cleanup_tmp()

    def _cleanup_tmp(self) -> None:
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def _new_record(self, rid: str, accepted_ns: int, tls_done_ns: int | None, req: _Request, path: str) -> dict:
        rec: dict[str, Any] = {
            "request_id": rid,
            "method": req.method,
            "path": path,
            "status": None,
            "fault": "none",
            "accepted_ns": accepted_ns,
            "tls_done_ns": tls_done_ns,
            "body_received_ns": req.body_received_ns,
            "received_ns": req.received_ns,
            "headers_sent_ns": None,
            "first_event_ns": None,
            "first_token_ns": None,
            "first_answer_ns": None,
            "last_byte_ns": None,
            "input_tokens": None,
            "cached_tokens": None,
            "cache_write_tokens": None,
            "ratelimit_remaining_requests": None,
            "ratelimit_remaining_tokens": None,
        }
        self._log.pop(rid, None)
        self._log[rid] = rec
        while len(self._log) > LOG_CAPACITY:
            self._log.popitem(last=False)
        return rec

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted_ns = time.monotonic_ns()
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle delay on small SSE writes
        try:
            tls_done_ns = None
            if self._ssl is not None:
                # TLS after accept (not start_server(ssl=...)) so accepted_ns is the TCP accept, not the handshake end.
                await writer.start_tls(self._ssl, ssl_handshake_timeout=10)
                tls_done_ns = time.monotonic_ns()
                ssl_object = writer.get_extra_info("ssl_object")
                if self.http2 and ssl_object is not None and ssl_object.selected_alpn_protocol() == "h2":
                    from devtools.mockllm.h2server import serve_h2

                    await serve_h2(self, reader, writer, accepted_ns, tls_done_ns)
                    return
            conn = _Connection(reader, writer)
            while True:
                try:
                    async with asyncio.timeout(IDLE_TIMEOUT_S):
                        req = await conn.read_request()
                except _BadRequest as exc:
                    error = {"error": {"message": str(exc), "type": "bad_request"}}
                    with contextlib.suppress(h11.LocalProtocolError):  # too late for a response: just close
                        await self._send(_Out(conn, {}), exc.status, error, close=True)
                    break
                if req is None or not await self._respond(req, conn, accepted_ns, tls_done_ns):
                    break
        except (OSError, TimeoutError, asyncio.IncompleteReadError) as exc:
            # Client gone, idle too long or TLS refused: routine, never a traceback.
            log.debug("mockllm connection ended: %r", exc)
        except asyncio.CancelledError:
            # stop() cancels us; ending normally keeps 3.11's stream callback from logging a traceback.
            log.debug("mockllm connection cancelled by stop()")
        except Exception:  # a bug here must not take the whole server down
            log.exception("mockllm: unexpected error")
        finally:
            self._tasks.discard(task)
            writer.close()
            try:
                # A TLS peer that never answers close_notify must not hold up stop().
                async with asyncio.timeout(1):
                    await writer.wait_closed()
            except TimeoutError:
                writer.transport.abort()
            except Exception:
                pass

    async def _respond(self, req: _Request, conn: _Connection, accepted_ns: int, tls_done_ns: int | None) -> bool:
        """Serve one request; True when the connection may carry another."""
        url = urlsplit(req.target)
        path = url.path or "/"
        if path.startswith("/_mock/log/"):
            rec = self._log.get(unquote(path[len("/_mock/log/") :]))
            return await self._send(conn.out({}), 200 if rec else 404, rec or {"error": "unknown request id"})

        style, model, stream = "http", "", False
        azure = AZURE_PATH.fullmatch(path)
        if path in _PATH_STYLES:
            style = _PATH_STYLES[path]
        elif azure:
            style, model = "openai", unquote(azure.group(1) or "")  # a deployment answers as its model
        elif gemini := _GEMINI_RE.fullmatch(path):
            style, model, stream = "gemini", unquote(gemini.group(1)), gemini.group(2) == "streamGenerateContent"
        # Capped: the log keeps 10,000 ids and must not become a memory sink.
        rid = req.headers.get("x-mock-request-id", "")[:200] or uuid.uuid4().hex
        out = conn.out(self._new_record(rid, accepted_ns, tls_done_ns, req, path))
        head_only = req.method == "HEAD"
        reader = conn.reader
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            knobs = resolve_knobs(query, req.headers, self.defaults)
        except KnobError as exc:
            return await self._send(out, 400, error_body(style, 400, str(exc), knob=exc.knob), head_only)
        # The dialect shapes chat completions only; Azure's paths speak Azure's.
        provider = "azure-openai" if azure else knobs["provider"] if style == "openai" else "none"
        if req.method not in (("GET", "HEAD", "POST") if style == "http" else ("POST",)):
            body = error_body(style, 405, f"method {req.method} not allowed on {path}")
            return await self._send(out, 405, body, head_only, (("Allow", "POST"),))
        body: Any = {}
        if style != "http":
            try:
                body = json.loads(req.body or b"{}")
            except ValueError:  # JSONDecodeError and UnicodeDecodeError alike
                body = None
            if not isinstance(body, dict):
                return await self._send(out, 400, error_body(style, 400, "the request body must be a JSON object"))
            stream = stream or body.get("stream") is True
            model = model or str(body.get("model") or "mock-model")
            out.rec.update(provider=provider, credential=credential_record(req.headers))
            if style == "openai":
                out.rec["stream_options"] = body.get("stream_options")
            refused = refusal(provider, path, query, req.headers, body)
            if refused is not None:
                return await self._send(out, refused[0], refused[1], head_only)

        fault = knobs["fault"]
        if fault != "none" and self._random.random() >= knobs["fault_rate"]:
            fault = "none"
        out.rec.update(
            fault=fault,
            style=style,
            model=model,
            stream=stream,
            credential=credential_record(req.headers),
            accept_encoding=req.headers.get("accept-encoding"),
        )
        out.split, out.encoding = knobs["split"], knobs["encoding"]
        echo = echo_text(req.headers, knobs["echo_key"])
        out.slow_ms = knobs["slow_headers_ms"] if fault == "slow_headers" else 0.0
        await self._sleep(knobs["headers_delay_ms"], knobs)
        fmt, room, text = None, None, ""
        if style != "http":
            fmt = make_format(provider, style, model, body, knobs)
            fmt.echo = echo
            fmt.prompt_tokens = count_tokens(text := prompt_text(body))
            who = out.rec["credential"]["sha256"] if out.rec["credential"] else ""
            room = self._limiter.admit((who, model), knobs, fmt.prompt_tokens + fmt.completion_tokens)
            out.rec.update(
                input_tokens=fmt.prompt_tokens,
                ratelimit_remaining_requests=room and room.requests_remaining,
                ratelimit_remaining_tokens=room and room.tokens_remaining,
            )
        if fault in ("429", "500", "overloaded") or (room is not None and room.exceeded):
            return await self._refuse(out, fault, provider, style, knobs, echo, room, head_only)

        if fmt is None:  # plain HTTP
            payload = _dumps({"status": "ok"}).encode()
            if knobs["body_bytes"] > len(payload):
                pad = knobs["body_bytes"] - len('{"status":"ok","pad":""}')
                payload = _dumps({"status": "ok", "pad": "x" * pad}).encode()
            return await self._send(
                out, knobs["status"], payload, head_only, fault=fault, reader=reader, stall_s=knobs["stall_s"]
            )

        if knobs["cache"]:
            fmt.cached_tokens, fmt.cache_write_tokens = self._cache.use(
                model, text, knobs["cache_ttl_s"], knobs["cache_min_tokens"]
            )
        # Only the tokens the cache did not hold are read again before the first token.
        prefill = prefill_ms(fmt.prompt_tokens - fmt.cached_tokens, knobs)
        first_delay = self._first_token_delay(model, knobs) + slowed_for_region(knobs, req.headers, time.time())
        first_delay = prefill + max(0.0, first_delay - (knobs["cache_hit_ms"] if fmt.cached_tokens else 0.0))
        out.rec.update(
            cached_tokens=fmt.cached_tokens,
            cache_write_tokens=fmt.cache_write_tokens,
            prefill_ms=prefill,
            first_token_delay_ms=first_delay,
        )
        headroom = ratelimit_headers(style, room)
        if not stream:
            # A non-streamed answer only leaves once fully "generated".
            await self._sleep(first_delay + knobs["gap_ms"] * max(0, fmt.completion_tokens - 1), knobs)
            if fault == "error_mid":
                return await self._send(out, 500, http_error_body(provider, style, 500, SERVER_ERROR), extra=headroom)
            return await self._send(
                out, 200, fmt.complete(), extra=headroom, fault=fault, reader=reader, stall_s=knobs["stall_s"]
            )
        extra = ((("x-mock-fault", fault),) if fault != "none" else ()) + headroom
        await out.head(200, "text/event-stream; charset=utf-8", None, extra)
        return await self._stream(out, reader, fmt, fault, first_delay)

    async def _refuse(
        self,
        out: _Out,
        fault: str,
        provider: str,
        style: str,
        knobs: dict[str, Any],
        echo: str,
        room: Headroom | None,
        head_only: bool,
    ) -> bool:
        """A status answer before any token: a request over its budget, or the 429, 500 and overloaded faults."""
        extra: tuple[tuple[str, str], ...] = ()
        if room is not None and room.exceeded:
            status = 429
            message, payload, extra = rate_limited(provider, style, room, echo)
        elif fault == "overloaded":
            status, message, payload = overloaded(style, echo)
        else:
            status = int(fault)
            message = ("Rate limit reached for requests" if status == 429 else SERVER_ERROR) + echo
            payload = http_error_body(provider, style, status, message)
            if status == 429:
                retry = ("Retry-After", str(knobs["retry_after"]))
                extra = (*ratelimit_headers(style, fault_headroom(knobs)), retry)
        if knobs["error_format"] == "text":
            return await self._send(out, status, message.encode(), head_only, extra, ctype="text/plain")
        return await self._send(out, status, payload, head_only, extra)

    async def _send(
        self,
        out: _Out,
        status: int,
        payload: dict[str, Any] | bytes,
        head_only: bool = False,
        extra: tuple[tuple[str, str], ...] = (),
        fault: str = "none",
        reader: asyncio.StreamReader | None = None,
        stall_s: float = 0.0,
        ctype: str = "application/json",
        close: bool = False,
    ) -> bool:
        """A Content-Length answer; the stream faults get their non-stream meaning here."""
        data = payload if isinstance(payload, bytes) else _dumps(payload).encode()
        if fault == "malformed":
            data = b'{"choices": [tru'
        data = out.compress(data)
        await out.head(status, ctype, len(data), extra, close)
        if head_only or status in (204, 304):
            await out.end(stamp=False)  # no body: h11 only notes the end
            return out.keep
        if fault == "truncate":  # fewer bytes than Content-Length promised: what a dropped upstream looks like
            await out.body(data[: len(data) // 2])
            return False
        if fault == "stall" and reader is not None:
            await self._hold(reader, stall_s)
            return False
        await out.body(data)
        return out.keep

    async def _stream(
        self,
        out: _Out,
        reader: asyncio.StreamReader,
        fmt: _OpenAI | _Responses | _Anthropic | _Gemini,
        fault: str,
        first_delay: float,
    ) -> bool:
        knobs = fmt.knobs
        # Every event is serialised before the first write, so JSON work never sits between a sleep and its write.
        items = list(fmt.stream())
        last = max(i for i, (kind, _) in enumerate(items) if kind in (META, TOKEN, ANSWER))
        generated = 0
        for i, (kind, data) in enumerate(items):
            if kind == WAIT:
                # Pings fall inside the wait for the first token, where real servers send them.
                pings = fmt.pings
                share = self._jitter(first_delay, knobs) / (pings + 1)
                for _ in range(pings):
                    await self._sleep(share)
                    await out.event(fmt.ping(), META if fmt.ping_is_event else COMMENT)
                await self._sleep(share)
                if pings and data:
                    await out.event(data)
                continue
            if kind == HALF and fault == "stall":
                await self._hold(reader, knobs["stall_s"])
                return False
            if kind == HALF and fault in MID_FAULTS:
                await (out.event(fmt.error(), end=True) if fault == "error_mid" else out.end())
                return out.keep
            if kind == HALF:
                continue
            if kind != META:
                if generated:
                    await self._sleep(knobs["gap_ms"], knobs)
                generated += 1
            malformed_next = kind == ANSWER and fault == "malformed" and generated == fmt.reasoning + 1
            await out.event(data, kind, end=i == last and not malformed_next)
            if malformed_next:
                await out.event(fmt.malformed(), end=i == last)
        return out.keep

    def _first_token_delay(self, model: str, knobs: dict[str, Any]) -> float:
        now, last = time.monotonic(), self._last_served.get(model)
        self._last_served[model] = now
        idle = last is None or now - last > knobs["cold_start_after_s"]
        return knobs["ttft_ms"] + (knobs["cold_start_ms"] if knobs["cold_start_after_s"] > 0 and idle else 0.0)

    def _jitter(self, ms: float, knobs: dict[str, Any]) -> float:
        jitter = knobs["jitter_ms"]
        return max(0.0, ms + self._random.uniform(-jitter, jitter)) if jitter else ms

    async def _sleep(self, ms: float, knobs: dict[str, Any] | None = None) -> None:
        ms = self._jitter(ms, knobs) if knobs else ms
        if ms > 0:
            await asyncio.sleep(ms / 1000)

    @staticmethod
    async def _hold(reader: asyncio.StreamReader, seconds: float) -> None:
        """Keep the connection open until the client leaves or `seconds` pass."""
        with contextlib.suppress(TimeoutError, OSError):
            async with asyncio.timeout(seconds):
                while await reader.read(65536):
                    pass


@contextlib.contextmanager
def running_server(
    tls: bool = False,
    defaults: dict[str, Any] | None = None,
    host: str = "127.0.0.1",
    http2: bool = False,
    ca_dir: str | None = None,
) -> Iterator[MockLLMServer]:
    """A server on its own loop in a daemon thread, for synchronous callers such as tests."""
    server = MockLLMServer(host=host, tls=tls, defaults=defaults, http2=http2, ca_dir=ca_dir)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:
            failure.append(exc)
        ready.set()
        if not failure:
            loop.run_forever()

    thread = threading.Thread(target=run, name="mockllm", daemon=True)
    thread.start()
    ready.wait()
    try:
        if failure:
            raise failure[0]
        yield server
    finally:
        if not failure:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    tls: bool = False,
    ca_out: str | None = None,
    defaults: dict[str, Any] | None = None,
    on_ready: Callable[[str], None] | None = None,
    http2: bool = False,
) -> None:
    """Serve until SIGINT or SIGTERM, then return normally; OSError when the address is taken.

    on_ready gets the one line a launcher prints (default: stdout), from which scripts read the URL and CA path.
    """

    async def run() -> None:
        server = MockLLMServer(host, port, tls, defaults, http2=http2)
        await server.start()
        try:
            if ca_out and server.ca_pem_path:
                shutil.copyfile(server.ca_pem_path, ca_out)
            stop = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
            line = f"mockllm serving {server.base_url}" + (f" ca={ca_out or server.ca_pem_path}" if tls else "")
            (on_ready or (lambda text: print(text, flush=True)))(line)
            await stop.wait()
        finally:
            await server.stop()

    asyncio.run(run())
