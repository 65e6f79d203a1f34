"""A mock LLM API server for tests, benchmarks and the demo.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length and chunked bodies, optional TLS)
and just enough of the OpenAI Chat Completions, Anthropic Messages and Gemini generateContent
wire formats for the official SDKs and our probes. Timing and failures are driven by "knobs"
(see KNOBS), so a test can ask for a 300 ms time to first token or a stream that dies half
way, then compare what its client measured with the server-side timestamps at
GET /_mock/log/{request_id}. They are time.monotonic_ns(): CLOCK_MONOTONIC is shared by all
processes on Linux, so a client in another process can subtract them from its own readings.

Plain Python on purpose (stdlib + trustme): benchmarks can run it without
Django, and the management command is only a thin wrapper around serve().
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http
import json
import logging
import math
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
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from probes.mockformats import (
    ANSWER,
    FORMATS,
    HALF,
    META,
    SERVER_ERROR,
    TOKEN,
    WAIT,
    _Anthropic,
    _dumps,
    _Gemini,
    _OpenAI,
    error_body,
)

log = logging.getLogger(__name__)

LOG_CAPACITY = 10_000
MAX_BODY = 16 * 1024 * 1024
MAX_HEADERS = 100
LINE_LIMIT = 64 * 1024
IDLE_TIMEOUT_S = 120.0
FAULTS = ("none", "429", "500", "error_mid", "truncate", "stall", "malformed", "slow_headers")
# echo_key: put the credential the request carried into the fault's error message (the 429/500 body, the
# error_mid event, the malformed line), as some providers do, in one of these forms; tests check it never
# reaches what a client reports.
ECHO_FORMS = ("none", "raw", "percent", "json", "repr")
# error_format: the 429/500 body as the provider's JSON, or as plain text (a proxy's or gateway's page).
ERROR_FORMATS = ("json", "text")
# encoding: compress bodies and streams whatever the client asked for (servers that ignore Accept-Encoding).
ENCODINGS = ("identity", "gzip", "deflate")
CHOICES = {"fault": FAULTS, "echo_key": ECHO_FORMS, "error_format": ERROR_FORMATS, "encoding": ENCODINGS}
MID_FAULTS = ("error_mid", "truncate", "stall")
def _credential_value(headers: Mapping[str, str]) -> str | None:
    for name in ("authorization", "x-api-key", "x-goog-api-key"):
        if name in headers:
            value = headers[name]
            return value[7:] if name == "authorization" and value.lower().startswith("bearer ") else value
    return None


def _echo(headers: Mapping[str, str], form: str) -> str:
    """The text a provider that echoes keys adds to its error message."""
    value = _credential_value(headers)
    if form == "none" or value is None:
        return ""
    shown = {"raw": value, "percent": quote(value, safe=""), "json": json.dumps(value)[1:-1].replace("/", "\\/"),
             "repr": repr(value.encode("latin-1", "backslashreplace"))}[form]
    return f" Incorrect API key provided: {shown}."


def _credential(headers: Mapping[str, str]) -> dict[str, str] | None:
    """Which header carried a credential, and a digest of it (never the value):
    lets tests check that a key was sent where its provider expects it."""
    for name in ("authorization", "x-api-key", "x-goog-api-key"):
        if name in headers:
            value = headers[name]
            if name == "authorization" and value.lower().startswith("bearer "):
                value = value[7:]
            return {"header": name, "sha256": hashlib.sha256(value.encode()).hexdigest(),
                    "anthropic_version": headers.get("anthropic-version", "")}
    return None


class KnobError(ValueError):
    def __init__(self, knob: str, message: str) -> None:
        super().__init__(f"invalid knob {knob}: {message}")
        self.knob = knob


# name: (type, built-in default, lowest, highest); flags are the ints 0 and 1, and str knobs take one of CHOICES.
MAX_MS = 3_600_000
KNOBS: dict[str, tuple[type, Any, float, float]] = {
    "headers_delay_ms": (float, 0.0, 0, MAX_MS),
    "ttft_ms": (float, 0.0, 0, MAX_MS),
    "tokens": (int, 8, 0, 100_000),
    "gap_ms": (float, 0.0, 0, MAX_MS),
    "reasoning_tokens": (int, 0, 0, 100_000),
    "jitter_ms": (float, 0.0, 0, MAX_MS),
    "pings": (int, 0, 0, 1_000),
    "usage": (int, 1, 0, 1),
    "crlf": (int, 0, 0, 1),
    "split": (int, 0, 0, 1),
    "multiline": (int, 0, 0, 1),
    "fault": (str, "none", 0, 0),
    "echo_key": (str, "none", 0, 0),
    "error_format": (str, "json", 0, 0),
    "encoding": (str, "identity", 0, 0),
    "fault_rate": (float, 1.0, 0, 1),
    "cold_start_after_s": (float, 0.0, 0, 86_400 * 365),
    "cold_start_ms": (float, 0.0, 0, MAX_MS),
    "retry_after": (int, 7, 0, 86_400),
    "stall_s": (float, 600.0, 0, 86_400),
    "slow_headers_ms": (float, 300.0, 0, MAX_MS),
    "status": (int, 200, 200, 599),
    "body_bytes": (int, 0, 0, 64 * 1024 * 1024),
}


def parse_knob(name: str, raw: Any) -> Any:
    """One knob value from text (or a Python value, for server defaults); KnobError names the knob."""
    if name not in KNOBS:
        raise KnobError(name, f"unknown knob (known: {', '.join(KNOBS)})")
    kind, _, low, high = KNOBS[name]
    text = str(int(raw) if isinstance(raw, bool) else raw).strip()
    if kind is str:
        if text not in CHOICES[name]:
            raise KnobError(name, f"must be one of {', '.join(CHOICES[name])} (got {raw!r})")
        return text
    try:
        value = float(text) if kind is float else int(text, 10)
    except ValueError:
        value = None
    # float() accepts "nan" and "inf", which would poison every delay.
    if value is None or not math.isfinite(value) or not low <= value <= high:
        what = "a number" if kind is float else "an integer"
        raise KnobError(name, f"must be {what} from {low:g} to {high:g} (got {raw!r})")
    return value


def resolve_knobs(query: Mapping[str, str], headers: Mapping[str, str], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Header beats query string beats server defaults beats built-ins."""
    knobs = {name: defaults.get(name, spec[1]) for name, spec in KNOBS.items()}
    for name, raw in query.items():
        if name in KNOBS:  # other parameters (Gemini's alt=sse, key=...) are not ours
            knobs[name] = parse_knob(name, raw)
    for header, raw in headers.items():
        if header.startswith("x-mock-") and header != "x-mock-request-id":
            # Unknown x-mock-* headers are refused: a typo must not silently test nothing.
            name = header[len("x-mock-"):].replace("-", "_")
            knobs[name] = parse_knob(name, raw)
    return knobs


def _split_points(data: bytes) -> list[bytes]:
    """Cut one SSE event at the places incremental parsers get wrong."""
    cuts = {3}  # inside the field name, before a parser has seen the colon
    for i in range(1, len(data)):
        if data[i - 1] >= 0xC0 or (data[i - 1] == 0x0D and data[i] == 0x0A):
            cuts.add(i)
    edges = [0, *sorted(c for c in cuts if 0 < c < len(data)), len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


class _BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _Request:
    def __init__(self, method: str, target: str, version: str, headers: dict[str, str], body: bytes) -> None:
        self.method, self.target, self.version, self.headers, self.body = method, target, version, headers, body
        self.received_ns = time.monotonic_ns()
        # HTTP/1.0 gets no chunked encoding, so its streams end by closing.
        self.keep_alive = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()


_TOKEN_RE = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_LENGTH_RE = re.compile(r"[0-9]{1,12}")
_REASONS = {status.value: status.phrase for status in http.HTTPStatus}
_GEMINI_RE = re.compile(r"/v1(?:beta|alpha)?/models/([^/:]+):(streamGenerateContent|generateContent)")


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """Read one request; None when the client closed between requests."""
    lines: list[str] = []
    while not lines:  # RFC 9112 lets a client send stray CRLFs between requests; skip them
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise _BadRequest("incomplete request head") from None
            return None
        except asyncio.LimitOverrunError:
            raise _BadRequest("request head longer than 64 KiB") from None
        lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")[:-2]
    request_line, *lines = lines
    parts = request_line.split(" ")
    if len(parts) != 3 or not _TOKEN_RE.fullmatch(parts[0]) or not parts[1] or parts[2] not in ("HTTP/1.1", "HTTP/1.0"):
        raise _BadRequest("malformed request line")
    if len(lines) > MAX_HEADERS:
        raise _BadRequest("too many headers")
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not _TOKEN_RE.fullmatch(name):
            raise _BadRequest("malformed header line")
        name, value = name.lower(), value.strip(" \t")
        # Differing Content-Lengths are the request-smuggling classic.
        if name == "content-length" and headers.get(name, value) != value:
            raise _BadRequest("conflicting Content-Length headers")
        headers[name] = headers[name] + ", " + value if name in headers and name != "content-length" else value
    if "transfer-encoding" in headers:
        raise _BadRequest("request bodies must use Content-Length", 411)
    length = headers.get("content-length", "0")
    if not _LENGTH_RE.fullmatch(length):
        raise _BadRequest("malformed Content-Length")
    if int(length) > MAX_BODY:
        raise _BadRequest("request body too large", 413)
    return _Request(parts[0], parts[1], parts[2], headers, await reader.readexactly(int(length)))


class _Out:
    """Writes one response and stamps the log record right before bytes leave."""

    def __init__(self, writer: asyncio.StreamWriter, rec: dict[str, Any], req: _Request | None) -> None:
        self.writer, self.rec = writer, rec
        self.keep = req.keep_alive if req else False
        self.chunked = req is not None and req.version == "HTTP/1.1"
        self.split, self.slow_ms = False, 0.0
        self.encoding = "identity"
        self._compressor: Any = None

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

    async def head(self, status: int, ctype: str, length: int | None, extra: tuple[tuple[str, str], ...] = ()) -> None:
        """length None means a stream: chunked, or close-delimited for HTTP/1.0."""
        hdrs = [("Content-Type", ctype)]
        if length is None:
            hdrs.append(("Cache-Control", "no-cache"))
            if self.chunked:
                hdrs.append(("Transfer-Encoding", "chunked"))
            self.keep = self.keep and self.chunked
        elif status not in (204, 304):
            hdrs.append(("Content-Length", str(length)))
        if self.encoding != "identity":
            hdrs.append(("Content-Encoding", self.encoding))
        hdrs += [("x-mock-request-id", self.rec.get("request_id", "-")), *extra,
                 ("Connection", "keep-alive" if self.keep else "close")]
        status_line = f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n".encode("latin-1")
        lines = [f"{k}: {v}\r\n".encode("latin-1") for k, v in hdrs]
        lines[-1] += b"\r\n"
        self.rec["status"] = status
        self.rec["headers_sent_ns"] = time.monotonic_ns()
        if not self.slow_ms:
            return await self._write(status_line + b"".join(lines))
        await self._write(status_line)
        for line in lines:
            await asyncio.sleep(self.slow_ms / 1000)
            await self._write(line)

    async def body(self, data: bytes) -> None:
        self.rec["last_byte_ns"] = time.monotonic_ns()
        await self._write(data)

    async def event(self, data: bytes, kind: int = META, end: bool = False) -> None:
        now = time.monotonic_ns()
        for key, applies in (("first_event_ns", True), ("first_token_ns", kind in (TOKEN, ANSWER)),
                             ("first_answer_ns", kind == ANSWER)):
            if applies and self.rec.get(key) is None:
                self.rec[key] = now
        if self.encoding != "identity":
            pieces = [self.compress(data, final=end)]
        else:
            pieces = _split_points(data) if self.split else [data]
        for i, piece in enumerate(pieces):
            frame = b"%x\r\n%s\r\n" % (len(piece), piece) if self.chunked else piece
            if i:
                # Let each piece leave as its own TCP segment (TCP_NODELAY) instead of coalescing.
                await asyncio.sleep(0.001)
            if end and i == len(pieces) - 1:
                # The terminator rides with the last event: a client sees the end as soon as the last event.
                frame += b"0\r\n\r\n" if self.chunked else b""
                self.rec["last_byte_ns"] = time.monotonic_ns()
            await self._write(frame)

    async def end(self) -> None:
        self.rec["last_byte_ns"] = time.monotonic_ns()
        if self.chunked:
            await self._write(b"0\r\n\r\n")


class MockLLMServer:
    """The server; start() and stop() must run on the same event loop."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tls: bool = False,
                 defaults: dict[str, Any] | None = None) -> None:
        self.host, self._requested_port, self.tls = host, port, tls
        # Parsed now so that a bad default fails at startup, not on the first request.
        self.defaults = {name: parse_knob(name, raw) for name, raw in (defaults or {}).items()}
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._log: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._last_served: dict[str, float] = {}
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
            self._ssl.set_alpn_protocols(["http/1.1"])  # we only speak HTTP/1.1; never let a client pick h2
            self._tmpdir = tempfile.mkdtemp(prefix="mockllm-")
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
        rec: dict[str, Any] = {"request_id": rid, "method": req.method, "path": path, "status": None, "fault": "none",
                               "accepted_ns": accepted_ns, "tls_done_ns": tls_done_ns, "received_ns": req.received_ns,
                               "headers_sent_ns": None, "first_event_ns": None, "first_token_ns": None,
                               "first_answer_ns": None, "last_byte_ns": None}
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
            while True:
                try:
                    async with asyncio.timeout(IDLE_TIMEOUT_S):
                        req = await _read_request(reader)
                except _BadRequest as exc:
                    error = {"error": {"message": str(exc), "type": "bad_request"}}
                    await self._send(_Out(writer, {}, None), exc.status, error)
                    break
                if req is None or not await self._respond(req, reader, writer, accepted_ns, tls_done_ns):
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

    async def _respond(self, req: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       accepted_ns: int, tls_done_ns: int | None) -> bool:
        """Serve one request; True when the connection may carry another."""
        url = urlsplit(req.target)
        path = url.path or "/"
        if path.startswith("/_mock/log/"):
            rec = self._log.get(unquote(path[len("/_mock/log/"):]))
            return await self._send(_Out(writer, {}, req), 200 if rec else 404, rec or {"error": "unknown request id"})

        style, model, stream = "http", "", False
        if path in ("/v1/chat/completions", "/v1/messages"):
            style = "openai" if path == "/v1/chat/completions" else "anthropic"
        elif gemini := _GEMINI_RE.fullmatch(path):
            style, model, stream = "gemini", unquote(gemini.group(1)), gemini.group(2) == "streamGenerateContent"
        # Capped: the log keeps 10,000 ids and must not become a memory sink.
        rid = req.headers.get("x-mock-request-id", "")[:200] or uuid.uuid4().hex
        out = _Out(writer, self._new_record(rid, accepted_ns, tls_done_ns, req, path), req)
        head_only = req.method == "HEAD"
        try:
            knobs = resolve_knobs(dict(parse_qsl(url.query, keep_blank_values=True)), req.headers, self.defaults)
        except KnobError as exc:
            return await self._send(out, 400, error_body(style, 400, str(exc), knob=exc.knob), head_only)
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

        fault = knobs["fault"]
        if fault != "none" and self._random.random() >= knobs["fault_rate"]:
            fault = "none"
        out.rec.update(fault=fault, style=style, model=model, stream=stream, credential=_credential(req.headers),
                       accept_encoding=req.headers.get("accept-encoding"))
        out.split, out.encoding = knobs["split"], knobs["encoding"]
        echo = _echo(req.headers, knobs["echo_key"])
        out.slow_ms = knobs["slow_headers_ms"] if fault == "slow_headers" else 0.0
        await self._sleep(knobs["headers_delay_ms"], knobs)
        if fault in ("429", "500"):
            status = int(fault)
            message = ("Rate limit reached for requests" if status == 429 else SERVER_ERROR) + echo
            extra = (("Retry-After", str(knobs["retry_after"])),) if status == 429 else ()
            if knobs["error_format"] == "text":
                return await self._send(out, status, message.encode(), head_only, extra, ctype="text/plain")
            return await self._send(out, status, error_body(style, status, message), head_only, extra)

        if style == "http":
            payload = _dumps({"status": "ok"}).encode()
            if knobs["body_bytes"] > len(payload):
                pad = knobs["body_bytes"] - len('{"status":"ok","pad":""}')
                payload = _dumps({"status": "ok", "pad": "x" * pad}).encode()
            return await self._send(out, knobs["status"], payload, head_only, fault=fault, reader=reader,
                                    stall_s=knobs["stall_s"])

        config = body.get("generationConfig")
        max_tokens = (body.get("max_completion_tokens", body.get("max_tokens")) if style != "gemini"
                      else config.get("maxOutputTokens") if isinstance(config, dict) else None)
        fmt = FORMATS[style](model, body, knobs, max_tokens)
        fmt.echo = echo
        first_delay = out.rec["first_token_delay_ms"] = self._first_token_delay(model, knobs)
        if not stream:
            # A non-streamed answer only leaves once fully "generated".
            await self._sleep(first_delay + knobs["gap_ms"] * max(0, fmt.completion_tokens - 1), knobs)
            if fault == "error_mid":
                return await self._send(out, 500, error_body(style, 500, SERVER_ERROR))
            return await self._send(out, 200, fmt.complete(), fault=fault, reader=reader, stall_s=knobs["stall_s"])
        extra = (("x-mock-fault", fault),) if fault != "none" else ()
        await out.head(200, "text/event-stream; charset=utf-8", None, extra)
        return await self._stream(out, reader, fmt, fault, first_delay)

    async def _send(self, out: _Out, status: int, payload: dict[str, Any] | bytes, head_only: bool = False,
                    extra: tuple[tuple[str, str], ...] = (), fault: str = "none",
                    reader: asyncio.StreamReader | None = None, stall_s: float = 0.0,
                    ctype: str = "application/json") -> bool:
        """A Content-Length answer; the stream faults get their non-stream meaning here."""
        data = payload if isinstance(payload, bytes) else _dumps(payload).encode()
        if fault == "malformed":
            data = b'{"choices": [tru'
        data = out.compress(data)
        await out.head(status, ctype, len(data), extra)
        if head_only or status in (204, 304):
            return out.keep
        if fault == "truncate":  # fewer bytes than Content-Length promised: what a dropped upstream looks like
            await out.body(data[: len(data) // 2])
            return False
        if fault == "stall" and reader is not None:
            await self._hold(reader, stall_s)
            return False
        await out.body(data)
        return out.keep

    async def _stream(self, out: _Out, reader: asyncio.StreamReader, fmt: _OpenAI | _Anthropic | _Gemini,
                      fault: str, first_delay: float) -> bool:
        knobs = fmt.knobs
        # Every event is serialised before the first write, so JSON work never sits between a sleep and its write.
        items = list(fmt.stream())
        last = max(i for i, (kind, _) in enumerate(items) if kind in (META, TOKEN, ANSWER))
        generated = 0
        for i, (kind, data) in enumerate(items):
            if kind == WAIT:
                # Pings fall inside the wait for the first token, where real servers send them.
                pings = knobs["pings"]
                share = self._jitter(first_delay, knobs) / (pings + 1)
                for _ in range(pings):
                    await self._sleep(share)
                    await out.event(fmt.ping())
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
def running_server(tls: bool = False, defaults: dict[str, Any] | None = None,
                   host: str = "127.0.0.1") -> Iterator[MockLLMServer]:
    """A server on its own loop in a daemon thread, for synchronous callers such as tests."""
    server = MockLLMServer(host=host, tls=tls, defaults=defaults)
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


def serve(host: str = "127.0.0.1", port: int = 0, tls: bool = False, ca_out: str | None = None,
          defaults: dict[str, Any] | None = None, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT or SIGTERM, then return normally; OSError when the address is taken.

    on_ready gets the one line a launcher prints (default: stdout), from which scripts read the URL and CA path.
    """

    async def run() -> None:
        server = MockLLMServer(host, port, tls, defaults)
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
