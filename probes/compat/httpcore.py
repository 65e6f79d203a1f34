"""httpcore's private names (supported: httpcore >=1.0.9,<1.1), and its pool and connection with HTTP/2's
connection set-up made cheap.

When an HTTP/2 connection sends its preface, httpcore 1.0.9 makes a semaphore
of 100 stream slots (our own SETTINGS' MAX_CONCURRENT_STREAMS) and then takes
99 of them back, one await at a time, until the server's SETTINGS say how many
streams it allows. Every one of those awaits is a trip through the event loop
(anyio yields even when a slot is free), and on a busy machine those trips add
up to milliseconds spent between the TLS handshake and the request's HEADERS
frame, so inside TTFB (docs/benchmarks.md, "HTTP/2 set-up").
Here the semaphore is made with that one slot free, the state httpcore's loop
ends in; everything else (the preface, SETTINGS and WINDOW_UPDATE it writes,
the request, how later SETTINGS resize the slots) is httpcore's own code.

The connection's locks and that semaphore are also taken without a trip
through the loop when they are free (anyio's fast_acquire): one request takes
them seven times before its HEADERS frame is written and once for every read
after, and each trip is a wait on a busy machine. Taken or
not, they still exclude each other as before; a free lock just does not check
for cancellation, which the next socket wait does.

The names reached into (_init_lock, _max_streams, _max_streams_semaphore, ...)
are httpcore 1.0.9's; the engine's HTTP/2 tests run through this path. The
engine's socket stream (probes.engine.netstream) reads a socket's state with
httpcore's own helper, is_socket_readable, re-exported here.
"""

from __future__ import annotations

import logging
import typing

import anyio
import httpcore

from probes.compat import require

# Checked before the private imports below, so a release that moved them fails with this message.
MINIMUM, BELOW = "1.0.9", "1.1"
VERSION = require("httpcore", MINIMUM, BELOW, module=__name__)

from httpcore._async.http2 import HTTPConnectionState  # noqa: E402
from httpcore._synchronization import AsyncLock, AsyncSemaphore, AsyncShieldCancellation  # noqa: E402
from httpcore._trace import Trace  # noqa: E402
from httpcore._utils import is_socket_readable  # noqa: E402

__all__ = ["ConnectionPool", "HTTP2Connection", "HTTPConnection", "is_socket_readable"]

logger = logging.getLogger("httpcore.http2")


class _FreeLock(AsyncLock):
    """httpcore's lock, taken without yielding to the loop when it is free."""

    def setup(self) -> None:
        # The engine runs on asyncio only (httpcore would pick trio's lock under trio).
        self._backend = "asyncio"
        self._anyio_lock = anyio.Lock(fast_acquire=True)


class _StreamSlots(AsyncSemaphore):
    """httpcore's stream semaphore, made with only `free` of its `bound` slots free."""

    def __init__(self, bound: int, free: int) -> None:
        super().__init__(bound)
        self._free = free

    def setup(self) -> None:
        # The engine runs on asyncio only (httpcore would pick trio's semaphore under trio).
        self._backend = "asyncio"
        self._anyio_semaphore = anyio.Semaphore(initial_value=self._free, max_value=self._bound, fast_acquire=True)


class HTTP2Connection(httpcore.AsyncHTTP2Connection):
    def __init__(self, *args: typing.Any, **kwargs: typing.Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_lock = _FreeLock()
        self._state_lock = _FreeLock()
        self._read_lock = _FreeLock()
        self._write_lock = _FreeLock()

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        # A connection no longer usable is left to httpcore, which refuses it.
        if not self._sent_connection_init and self._state in (HTTPConnectionState.ACTIVE, HTTPConnectionState.IDLE):
            async with self._init_lock:
                if not self._sent_connection_init:
                    try:
                        kwargs = {"request": request}
                        async with Trace("send_connection_init", logger, request, kwargs):
                            await self._send_connection_init(**kwargs)
                    except BaseException:
                        with AsyncShieldCancellation():
                            await self.aclose()
                        raise
                    self._sent_connection_init = True
                    # One stream until the server's SETTINGS say more (as httpcore does).
                    self._max_streams = 1
                    bound = self._h2_state.local_settings.max_concurrent_streams
                    self._max_streams_semaphore = _StreamSlots(bound, free=self._max_streams)
        return await super().handle_async_request(request)


class HTTPConnection(httpcore.AsyncHTTPConnection):
    """httpcore's connection, which speaks HTTP/2 through HTTP2Connection.

    Its request lock is taken once per call before connecting (inside TTFB
    for HTTP/1.1 too), so it is a free-when-free lock as well."""

    def __init__(self, *args: typing.Any, **kwargs: typing.Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_lock = _FreeLock()

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        if not self.can_handle_request(request.url.origin):
            raise RuntimeError(f"Attempted to send request to {request.url.origin} on connection to {self._origin}")
        try:
            async with self._request_lock:
                if self._connection is None:
                    stream = await self._connect(request)
                    ssl_object = stream.get_extra_info("ssl_object")
                    http2_negotiated = ssl_object is not None and ssl_object.selected_alpn_protocol() == "h2"
                    if http2_negotiated or (self._http2 and not self._http1):
                        self._connection = HTTP2Connection(
                            origin=self._origin, stream=stream, keepalive_expiry=self._keepalive_expiry
                        )
                    else:
                        self._connection = httpcore.AsyncHTTP11Connection(
                            origin=self._origin, stream=stream, keepalive_expiry=self._keepalive_expiry
                        )
        except BaseException:
            self._connect_failed = True
            raise
        return await self._connection.handle_async_request(request)


class ConnectionPool(httpcore.AsyncConnectionPool):
    """httpcore's pool of HTTPConnection (no proxies: the engine never configures one)."""

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        return HTTPConnection(
            origin=origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=self._keepalive_expiry,
            http1=self._http1,
            http2=self._http2,
            retries=self._retries,
            local_address=self._local_address,
            uds=self._uds,
            network_backend=self._network_backend,
            socket_options=self._socket_options,
        )
