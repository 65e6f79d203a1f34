"""An httpx transport over an httpcore pool that uses our timed backend.

httpx's own transport does not let a caller choose httpcore's network
backend, so this is the thin adapter between the two public APIs.
"""

from __future__ import annotations

import ssl
import typing

import httpcore
import httpx

from probes.compat.httpcore import ConnectionPool
from probes.engine.clock import TimedBackend


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: typing.AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            await self._stream.aclose()


class TimedTransport(httpx.AsyncBaseTransport):
    def __init__(self, ssl_context: ssl.SSLContext, *, keepalive: bool, http2: bool = False) -> None:
        # httpcore's pool, with HTTP/2's per-connection set-up made cheap (probes.compat.httpcore).
        self._pool = ConnectionPool(
            ssl_context=ssl_context,
            # HTTP/1.1 stays possible with http2: httpcore speaks h2 only when
            # ALPN picked it, so a server that refuses h2 gets 1.1.
            http1=True,
            http2=http2,
            max_connections=None,
            # A cold probe must never reuse a connection: none is kept.
            max_keepalive_connections=None if keepalive else 0,
            keepalive_expiry=60.0 if keepalive else 0.0,
            network_backend=TimedBackend(),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        response = await self._pool.handle_async_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            # The async pool's bodies are async iterables (httpcore types both kinds of pool's together).
            stream=_Body(typing.cast(typing.AsyncIterable[bytes], response.stream)),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
