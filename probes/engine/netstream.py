"""A socket stream for httpcore that stamps every read with the kernel's
receive time.

Python timestamps taken after `recv` returns include the event loop's lag:
with hundreds of probes streaming in one process, a token can sit in the
socket buffer for milliseconds before the loop gets to it. SO_TIMESTAMPNS
makes the kernel report when the data arrived, so a busy loop delays our
reading, not our measurement. The kernel stamp is on CLOCK_REALTIME; it is
turned into our monotonic clock by taking the lag (realtime now minus
kernel stamp) off the monotonic now, so clock steps between calls cannot
skew it. Where the option is missing, reads are stamped on return.

TLS runs on ssl.SSLObject over memory buffers, so decrypted data carries the
stamp of the raw read that completed its record.
"""

from __future__ import annotations

import asyncio
import collections
import random
import socket
import ssl
import struct
import time
import typing

import httpcore

from probes.compat.httpcore import is_socket_readable

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_CMSG_SPACE = socket.CMSG_SPACE(16)
READ_SIZE = 65536
MAX_LAG_NS = 10_000_000_000  # a stamp claiming more lag than this is not trusted
# A server that speaks plain HTTP on the port reads our ClientHello as the start of a request and waits for
# the rest, while we wait for its ServerHello: without a bound of its own the handshake would last the
# call's whole timeout (30 s by default) and then read as a timeout. A handshake is a round trip or two;
# one taking longer than this is a failure of TLS, reported as one.
TLS_HANDSHAKE_TIMEOUT_S = 5.0


def emulated_delay_ns(rtt_ms: float, jitter_ms: float, fraction: float = 1.0) -> int:
    """One emulated round trip (or the given share of one): rtt +/- uniform
    jitter, never below 0."""
    if rtt_ms <= 0:
        return 0
    ms = rtt_ms + (random.uniform(-jitter_ms, jitter_ms) if jitter_ms > 0 else 0.0)
    return max(0, int(ms * fraction * 1e6))


def enable_kernel_timestamps(sock: socket.socket) -> bool:
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


class SocketStream(httpcore.AsyncNetworkStream):
    """Plain TCP; `last_stamp_ns` is the monotonic arrival time of the data
    most recently returned by `read`.

    The socket is drained by a reader callback as soon as the loop polls it,
    not when the task that parses the data is next run: a kernel stamp covers
    every segment a read takes (it is the last one's), so a read that comes
    late also stamps earlier data late. Each read keeps its own stamp in the
    queue, and the task takes them in order. The reader stays registered for
    the connection's life (one registration, not one per read) and is paused
    only while too much is queued, so a peer sending faster than we parse is
    held back by TCP again, not by our memory.
    """

    MAX_QUEUED = 4 * READ_SIZE

    def __init__(self, sock: socket.socket, kernel_stamps: bool) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._kernel = kernel_stamps
        self.last_stamp_ns = 0
        # (stamp_ns, bytes, or the exception a read raised); b"" is the EOF.
        self._queue: collections.deque[tuple[int, bytes | OSError]] = collections.deque()
        self._queued = 0
        self._waiter: asyncio.Future[None] | None = None
        self._reading = False
        self._ended = False  # EOF or an error was read: nothing more comes
        self._start_reading()

    def _start_reading(self) -> None:
        if not self._reading and not self._ended and self._sock.fileno() >= 0:
            self._loop.add_reader(self._sock.fileno(), self._on_readable)
            self._reading = True

    def _stop_reading(self) -> None:
        if self._reading:
            self._loop.remove_reader(self._sock.fileno())
            self._reading = False

    def _recv_stamped(self, max_bytes: int) -> tuple[bytes, int]:
        """One non-blocking read and its monotonic arrival time; raises
        BlockingIOError when nothing is there."""
        if self._kernel:
            data, ancillary, _, _ = self._sock.recvmsg(max_bytes, _CMSG_SPACE)
        else:
            data, ancillary = self._sock.recv(max_bytes), []
        mono = time.perf_counter_ns()
        stamp = mono
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
                sec, nsec = struct.unpack("qq", payload[:16])
                lag = time.time_ns() - (sec * 1_000_000_000 + nsec)
                if 0 <= lag < MAX_LAG_NS:
                    stamp = mono - lag
        return data, stamp

    def _due(self, stamp: int) -> int:
        """When a read stamped `stamp` is handed over (the delay line puts it later)."""
        return stamp

    def _on_readable(self) -> None:
        # One read per callback: the selector is level-triggered, so the loop
        # calls again while more is waiting, between other tasks' work.
        item: bytes | OSError
        try:
            item, stamp = self._recv_stamped(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            item, stamp = exc, time.perf_counter_ns()
        self._queue.append((self._due(stamp), item))
        if isinstance(item, OSError) or not item:
            self._ended = True
            self._stop_reading()
        else:
            self._queued += len(item)
            if self._queued > self.MAX_QUEUED:
                self._stop_reading()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait_due(self, due: int) -> None:
        """Nothing to wait for: data is handed over as soon as it was read."""

    async def recv(self, max_bytes: int) -> bytes:
        while not self._queue:
            if self._ended:
                return b""
            self._start_reading()
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        due, item = self._queue[0]
        await self._wait_due(due)
        self.last_stamp_ns = due
        if isinstance(item, OSError):
            raise httpcore.ReadError(str(item) or type(item).__name__) from item
        if not item:
            self._queue.popleft()
            return b""
        data = item[:max_bytes] if len(item) > max_bytes else item
        if len(item) > max_bytes:
            self._queue[0] = (due, item[max_bytes:])
        else:
            self._queue.popleft()
        self._queued -= len(data)
        if self._queued <= self.MAX_QUEUED:
            self._start_reading()
        return data

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.recv(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            await self._loop.sock_sendall(self._sock, buffer)
        except OSError as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    def _close(self) -> None:
        self._stop_reading()
        self._ended = True
        self._sock.close()

    async def aclose(self) -> None:
        self._close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> TLSStream:
        tls = TLSStream(self, ssl_context, server_hostname)
        try:
            async with asyncio.timeout(TLS_HANDSHAKE_TIMEOUT_S):
                await tls.handshake()
        except TimeoutError:
            # Our own bound expired (the call's deadline arrives as a cancellation instead).
            self._close()
            raise httpcore.ConnectError(
                f"no TLS answer within {TLS_HANDSHAKE_TIMEOUT_S:g} s: the server may speak plain HTTP on this "
                "port (try http://)"
            ) from None
        except ssl.SSLError as exc:
            self._close()
            if tls.answered_in_plain_http:
                raise httpcore.ConnectError(
                    "the server answered in plain HTTP, not TLS: use http:// for this port"
                ) from exc
            raise httpcore.ConnectError(str(exc)) from exc
        except BaseException:
            self._close()
            raise
        return tls

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "socket":
            return self._sock
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "is_readable":
            # Data (or the peer's close) already drained into the queue
            # counts as readable: the pool must not reuse such a connection.
            return bool(self._queue) or is_socket_readable(self._sock)
        return None


class DelayedSocketStream(SocketStream):
    """A SocketStream behind an emulated network path (the single-machine
    demo): whatever the peer sends is handed over one emulated round trip
    after it reached our kernel, and stamped at that emulated arrival.

    Loopback delivers the request to the server at once, so the whole round
    trip is put on the way back. The socket is drained as soon as data lands
    (as SocketStream does) and each read waits for its own due time: a delay
    line. Sleeping before a read instead would let the tokens that arrive
    meanwhile pile up into one read with one stamp, squashing the gaps
    between them. The delay is drawn again at each write (a new round trip
    starts there) and only then: the chunks of one response keep the
    server's pacing, as a constant one-way delay would. Due times never go
    backwards, since TCP keeps order.
    """

    def __init__(self, sock: socket.socket, kernel_stamps: bool, rtt_ms: float, jitter_ms: float) -> None:
        self._rtt_ms = rtt_ms
        self._jitter_ms = jitter_ms
        self._offset_ns = emulated_delay_ns(rtt_ms, jitter_ms)
        self._last_due = 0
        super().__init__(sock, kernel_stamps)

    def _due(self, stamp: int) -> int:
        due = max(self._last_due, stamp + self._offset_ns)
        self._last_due = due
        return due

    async def _wait_due(self, due: int) -> None:
        while (left := due - time.perf_counter_ns()) > 0:
            await asyncio.sleep(left / 1e9)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._offset_ns = emulated_delay_ns(self._rtt_ms, self._jitter_ms)
        await super().write(buffer, timeout)


class TLSStream(httpcore.AsyncNetworkStream):
    def __init__(self, raw: SocketStream, ctx: ssl.SSLContext, hostname: str | None) -> None:
        self._raw = raw
        self._in = ssl.MemoryBIO()
        self._out = ssl.MemoryBIO()
        self._obj = ctx.wrap_bio(self._in, self._out, server_side=False, server_hostname=hostname)
        self.last_stamp_ns = 0
        self._first_bytes = b""  # the start of what the server sent, to recognise a plain-HTTP answer

    async def _flush(self) -> None:
        pending = self._out.read()
        if pending:
            await self._raw.write(pending)

    async def _fill(self) -> bool:
        data = await self._raw.recv(READ_SIZE)
        if not data:
            self._in.write_eof()
            return False
        self._in.write(data)
        if len(self._first_bytes) < 5:
            self._first_bytes += data[: 5 - len(self._first_bytes)]
        self.last_stamp_ns = self._raw.last_stamp_ns
        return True

    @property
    def answered_in_plain_http(self) -> bool:
        # A TLS record starts with its type (0x16 for a handshake); an HTTP response with its version.
        return self._first_bytes == b"HTTP/"

    async def handshake(self) -> None:
        while True:
            try:
                self._obj.do_handshake()
                await self._flush()
                return
            except ssl.SSLWantReadError:
                await self._flush()
                if not await self._fill():
                    raise ssl.SSLEOFError("connection closed during the TLS handshake") from None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        while True:
            try:
                return self._obj.read(max_bytes)
            except ssl.SSLWantReadError:
                await self._flush()
                try:
                    got = await self._fill()
                except httpcore.ReadError:
                    raise
                if not got:
                    try:
                        return self._obj.read(max_bytes)
                    except (ssl.SSLWantReadError, ssl.SSLEOFError, ssl.SSLZeroReturnError):
                        return b""
            except ssl.SSLZeroReturnError:
                return b""
            except ssl.SSLError as exc:
                raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._obj.write(buffer)
        except ssl.SSLError as exc:
            raise httpcore.WriteError(str(exc)) from exc
        await self._flush()

    async def aclose(self) -> None:
        await self._raw.aclose()

    async def start_tls(  # pragma: no cover - TLS in TLS is not probed
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> typing.NoReturn:
        raise httpcore.ConnectError("TLS inside TLS is not supported")

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "ssl_object":
            return self._obj
        return self._raw.get_extra_info(info)
