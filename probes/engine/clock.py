"""The phase timeline of one call, and the network backend that fills it.

httpcore resolves names inside its TCP connect, so its own trace cannot tell
DNS from the handshake. Our backend resolves first (timed on its own), then
connects to the address while httpcore keeps the original host for the Host
header and SNI, then times the TLS handshake and stamps every read. It is an
httpcore extension point, so httpx's request and response handling is kept.

With emulated geography (the single-machine demo, ProbeSpec.emulated_rtt_ms)
the backend adds the path's delay inside the timed phases: a share of a
round trip to DNS, one round trip before the TCP connect completes, and a
delay line on everything received (netstream.DelayedSocketStream), which
charges the TLS handshake and each request its round trip.

All times are perf_counter_ns(): CLOCK_MONOTONIC on Linux, never adjusted.
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import os
import socket
import ssl
import time
import typing
from dataclasses import dataclass

import httpcore

from probes.engine.netstream import (
    DelayedSocketStream,
    SocketStream,
    TLSStream,
    emulated_delay_ns,
    enable_kernel_timestamps,
)

now_ns = time.perf_counter_ns

# Emulated DNS: a cached answer from a resolver in the region's own metro
# (the ISP's, or an anycast public one). It does not sit next to the target,
# so it costs a small share of the target's round trip, and no more than a
# regional hop however far away the target is.
DNS_RTT_FRACTION = 0.1
DNS_MAX_MS = 20.0


def dns_delay_ns(rtt_ms: float, jitter_ms: float) -> int:
    fraction = min(DNS_RTT_FRACTION, DNS_MAX_MS / rtt_ms) if rtt_ms > 0 else 0.0
    return emulated_delay_ns(rtt_ms, jitter_ms, fraction)


async def _sleep_ns(ns: int) -> None:
    # asyncio may wake a timer a hair early: loop until the delay has passed,
    # so the phase's end stamp never comes before the emulated delay.
    end = now_ns() + ns
    while (left := end - now_ns()) > 0:
        await asyncio.sleep(left / 1e9)


# The timeline of the call running in this task. A context variable (not an
# attribute of the backend) because a warm pool's connections outlive calls.
current: contextvars.ContextVar[Timeline | None] = contextvars.ContextVar("latency_timeline", default=None)


@dataclass
class Timeline:
    start_ns: int = 0
    dns_start: int | None = None
    dns_end: int | None = None
    connect_start: int | None = None
    connect_end: int | None = None
    tls_start: int | None = None
    tls_end: int | None = None
    last_read: int | None = None
    # When the request's last byte was handed to the kernel: uploading a long prompt is part of the wait, told
    # apart from the provider's prefill (request_sent_ms).
    request_sent: int | None = None
    phase: str = "start"  # the phase in progress: where a failure happened
    remote_addr: str | None = None
    new_connection: bool = False
    # Emulated geography (see ProbeSpec); the backend reads it from here
    # because httpcore gives it nothing of the call but host and port.
    emulated_rtt_ms: float = 0.0
    emulated_jitter_ms: float = 0.0
    # The protocol TLS negotiated by ALPN ("h2", "http/1.1"; None when the
    # server chose none or the connection was reused), and whether anything
    # but h2 must fail the call right after the handshake (http_version
    # 2-only: nothing is then sent over HTTP/1.1).
    alpn: str | None = None
    require_h2: bool = False

    @classmethod
    def for_spec(cls, spec: typing.Any) -> Timeline:
        return cls(
            emulated_rtt_ms=spec.emulated_rtt_ms,
            emulated_jitter_ms=spec.emulated_jitter_ms,
            require_h2=getattr(spec, "http_version", "1.1") == "2-only",
        )


class H2Refused(Exception):
    """The server did not pick h2 by ALPN although the probe requires it."""


class TimedStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: SocketStream | TLSStream) -> None:
        self._inner = inner
        self._pending: list[bytes] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            await self._flush(timeout)
        data = await self._inner.read(max_bytes, timeout)
        # When the data arrived (the kernel's stamp), not when we got to it.
        stamp = self._inner.last_stamp_ns or now_ns()
        tl = current.get()
        if tl is not None and data:
            # Arrivals only move forward, and none precedes the call: a kernel stamp is carried over from the
            # realtime clock (netstream), and a step of that clock between two reads can put one before the
            # last (seen on a busy VM: a body stamped before the headers it followed, a negative total).
            tl.last_read = max(stamp, tl.last_read or 0, tl.start_ns)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # httpcore writes the request line and headers, then the body, in
        # separate calls. Holding them until the first read sends the whole
        # request in one segment and one system call, as curl does, instead
        # of paying (and timing) a round of syscalls for each part.
        if buffer:
            self._pending.append(buffer)

    async def _flush(self, timeout: float | None) -> None:
        data = b"".join(self._pending)
        self._pending.clear()
        await self._inner.write(data, timeout)
        tl = current.get()
        if tl is not None and tl.phase != "body":
            # Before the answer's head only: HTTP/2's later writes (window updates) are not the request.
            tl.phase = "request"
            tl.request_sent = now_ns()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        tl = current.get()
        if tl is not None:
            tl.phase = "tls"
            tl.tls_start = now_ns()
        inner = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        if tl is not None:
            tl.tls_end = now_ns()
            tl.phase = "connected"
            ssl_object = inner.get_extra_info("ssl_object")
            tl.alpn = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
            if tl.require_h2 and tl.alpn != "h2":
                # Before the request is written: a 2-only probe never measures HTTP/1.1.
                await inner.aclose()
                raise H2Refused(f"the server refused HTTP/2: ALPN chose {tl.alpn or 'no protocol'}")
        return TimedStream(inner)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


def _is_localhost(host: str) -> bool:
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def _literal_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class TimedBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        tl = current.get() or Timeline()
        tl.new_connection = True
        loop = asyncio.get_running_loop()
        rtt, jitter = tl.emulated_rtt_ms, tl.emulated_jitter_ms
        if _is_localhost(host):
            # RFC 6761: localhost names are loopback without asking any
            # resolver (curl does the same); a thread-pool round trip to
            # getaddrinfo would only measure our own overhead.
            tl.phase = "dns"
            tl.dns_start = now_ns()
            await _sleep_ns(dns_delay_ns(rtt, jitter))
            candidates: list[tuple[socket.AddressFamily, tuple[typing.Any, ...]]] = [
                (socket.AF_INET, ("127.0.0.1", port)),
                (socket.AF_INET6, ("::1", port, 0, 0)),
            ]
            tl.dns_end = now_ns()
        elif _literal_ip(host):
            ip = host.strip("[]")
            family = socket.AF_INET6 if ":" in ip else socket.AF_INET
            candidates = [(family, (ip, port) if family == socket.AF_INET else (ip, port, 0, 0))]
        else:
            tl.phase = "dns"
            tl.dns_start = now_ns()
            await _sleep_ns(dns_delay_ns(rtt, jitter))
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
            except OSError as exc:
                raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
            except UnicodeError as exc:
                # The idna codec refusing the name: the engine checks host
                # names first, so this only guards what slipped through.
                raise httpcore.ConnectError("cannot resolve: the host name cannot be encoded for DNS") from exc
            tl.dns_end = now_ns()
            candidates = [(fam, addr) for fam, _, _, _, addr in infos]
            if not candidates:
                raise httpcore.ConnectError(f"cannot resolve {host}: no addresses")

        tl.phase = "connect"
        tl.connect_start = now_ns()
        last_exc: OSError | None = None
        for family, addr in candidates:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            kernel_stamps = enable_kernel_timestamps(sock)
            try:
                # Emulated: the SYN / SYN-ACK round trip, before the connect
                # completes (a refused attempt pays it too: its RST travels).
                await _sleep_ns(emulated_delay_ns(rtt, jitter))
                await loop.sock_connect(sock, addr)
            except OSError as exc:
                sock.close()
                last_exc = exc
                continue
            except BaseException:
                sock.close()
                raise
            tl.connect_end = now_ns()
            tl.phase = "connected"
            tl.remote_addr = addr[0]
            if rtt > 0:
                # Every later round trip (TLS handshake, each request) is
                # paid by delaying what the socket receives.
                return TimedStream(DelayedSocketStream(sock, kernel_stamps, rtt, jitter))
            return TimedStream(SocketStream(sock, kernel_stamps))
        assert last_exc is not None
        reason = os.strerror(last_exc.errno).lower() if last_exc.errno else str(last_exc)
        raise httpcore.ConnectError(f"cannot connect to {host}:{port}: {reason}") from last_exc

    async def connect_unix_socket(  # pragma: no cover
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> typing.NoReturn:
        raise httpcore.ConnectError("unix sockets are not probed")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
