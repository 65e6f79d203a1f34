"""The probe engine: one call to an LLM API, timed phase by phase.

Plain Python (no Django, no Celery): `await measure(spec)` returns a
Measurement. Async at its core so that one process keeps hundreds of probes
in flight; `measure_sync` wraps it for callers without an event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
import ssl
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import anyio._backends._asyncio  # noqa: F401  (loaded lazily on first use otherwise)
import anyio.streams.tls  # noqa: F401
import encodings.idna  # noqa: F401  (getaddrinfo of a name imports it on first use)
import httpcore
import httpx

from probes.engine import clock
from probes.engine.clock import Timeline, now_ns
from probes.engine.result import (
    COLD,
    CONNECT_ERROR,
    DNS_ERROR,
    HTTP_ERROR,
    OK,
    PROTOCOL_ERROR,
    TIMEOUT,
    TLS_ERROR,
    TRUNCATED,
    UPSTREAM_ERROR,
    WARM,
    Measurement,
    ProbeSpec,
)
from probes.engine.sse import SSEComment, SSEParser
from probes.engine.styles import STYLES
from probes.engine.styles.base import ProtocolError, StreamState, error_details
from probes.engine.transport import TimedTransport

__all__ = ["Engine", "Measurement", "ProbeSpec", "measure", "measure_sync"]

ERROR_BODY_CAP = 64 * 1024
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _TooLarge(Exception):
    pass


class Engine:
    """What may be built once and reused: SSL contexts and warm pools.

    Building a client or an SSL context happens here, before a call's clock
    starts, so it is never counted in a measurement.
    """

    def __init__(self) -> None:
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._warm: dict[str, httpx.AsyncClient] = {}
        _warm_up_process()

    def ssl_context(self, ca_bundle: str = "") -> ssl.SSLContext:
        ctx = self._contexts.get(ca_bundle)
        if ctx is None:
            ctx = ssl.create_default_context()
            if ca_bundle:
                ctx.load_verify_locations(cafile=ca_bundle)
            ctx.set_alpn_protocols(["http/1.1"])
            self._contexts[ca_bundle] = ctx
        return ctx

    def _client(self, spec: ProbeSpec) -> tuple[httpx.AsyncClient, bool]:
        """(client, owned): a cold call gets a client of its own, closed after."""
        if spec.connection == WARM:
            client = self._warm.get(spec.ca_bundle)
            if client is None:
                client = self._new_client(spec, keepalive=True)
                self._warm[spec.ca_bundle] = client
            return client, False
        return self._new_client(spec, keepalive=False), True

    def _new_client(self, spec: ProbeSpec, *, keepalive: bool) -> httpx.AsyncClient:
        transport = TimedTransport(self.ssl_context(spec.ca_bundle), keepalive=keepalive)
        # trust_env=False: proxies from the environment would bypass our timed
        # backend (and build SSL contexts of their own).
        return httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False, timeout=None)

    async def measure(self, spec: ProbeSpec) -> Measurement:
        return await _measure(self, spec)

    async def warm_up(self, spec: ProbeSpec) -> bool:
        """Open a pooled connection to the spec's origin with a HEAD request,
        so that the next warm call measures a reused connection. Returns
        whether the warm-up got an answer."""
        if spec.connection != WARM:
            return False
        client, _ = self._client(spec)
        token = clock.current.set(Timeline.for_spec(spec))
        try:
            async with asyncio.timeout(spec.timeout_s):
                response = await client.head(spec.url, headers={"user-agent": "latency-atlas-probe/0.1"})
                await response.aclose()
            return True
        except (TimeoutError, httpx.HTTPError, httpcore.NetworkError, httpcore.ProtocolError, OSError, ssl.SSLError):
            return False
        finally:
            clock.current.reset(token)

    async def aclose(self) -> None:
        clients, self._warm = list(self._warm.values()), {}
        for client in clients:
            await client.aclose()


_process_warmed = False


def _warm_up_process() -> None:
    """Pay one-time lazy costs (NSS modules behind getaddrinfo) up front."""
    global _process_warmed
    if _process_warmed:
        return
    _process_warmed = True
    import socket

    try:
        socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)
    except OSError:
        pass


async def measure(spec: ProbeSpec, engine: Engine | None = None) -> Measurement:
    if engine is not None:
        return await engine.measure(spec)
    own = Engine()
    try:
        return await own.measure(spec)
    finally:
        await own.aclose()


def measure_sync(spec: ProbeSpec) -> Measurement:
    return asyncio.run(measure(spec))


def _ms(start: int | None, end: int | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start) / 1e6, 3)


def _secrets_and_headers(spec: ProbeSpec) -> tuple[str | None, dict[str, str], list[str]]:
    secrets: list[str] = []
    api_key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    if api_key:
        secrets.append(api_key)
    headers: dict[str, str] = {}
    for name, value in spec.headers.items():
        # ${VAR} in a header value is read from the environment at call time,
        # so a secret header never has to be stored with the probe.
        def expand(m: re.Match) -> str:
            val = os.environ.get(m.group(1), "")
            if val:
                secrets.append(val)
            return val

        headers[name] = _ENV_REF.sub(expand, str(value))
    return api_key, headers, secrets


def _redact(message: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            message = message.replace(secret, "[redacted]")
    # Query strings may carry keys (Gemini's ?key=): never echo them.
    message = re.sub(r"([?&](?:key|api_key|apikey|token|access_token)=)[^&\s'\"]+", r"\1[redacted]", message)
    message = " ".join(message.split())
    return message[:300]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, round((when - datetime.now(UTC)).total_seconds(), 3))


def _percentile(sorted_values: list[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _failure_outcome(tl: Timeline) -> str:
    return {"dns": DNS_ERROR, "tls": TLS_ERROR}.get(tl.phase, CONNECT_ERROR)


async def _measure(engine: Engine, spec: ProbeSpec) -> Measurement:
    style = STYLES[spec.style]
    api_key, extra_headers, secrets = _secrets_and_headers(spec)
    result = Measurement(connection=spec.connection)
    try:
        plan = style.plan(spec, api_key)
    except ValueError as exc:
        result.outcome = PROTOCOL_ERROR
        result.error = _redact(f"cannot build request: {exc}", secrets)
        result.started_at = datetime.now(UTC).isoformat()
        return result
    headers = {**plan.headers, **{k.lower(): v for k, v in extra_headers.items()}}
    client, owned = engine._client(spec)
    request = client.build_request(plan.method, plan.url, headers=headers, content=plan.body)

    tl = Timeline.for_spec(spec)
    token = clock.current.set(tl)
    state = StreamState()
    response: httpx.Response | None = None
    received = 0
    try:
        result.started_at = datetime.now(UTC).isoformat(timespec="microseconds")
        tl.start_ns = t0 = now_ns()
        result.start_ns = t0
        try:
            async with asyncio.timeout(spec.timeout_s):
                response = await client.send(request, stream=True)
                headers_at = tl.last_read or now_ns()
                result.ttfb_ms = _ms(t0, headers_at)
                result.http_status = response.status_code
                result.http_version = response.http_version
                tl.phase = "body"

                if not 200 <= response.status_code < 300:
                    body = await _read_capped(response, ERROR_BODY_CAP, tl, truncate=True)
                    result.outcome = HTTP_ERROR
                    result.retry_after_s = _retry_after(response.headers.get("retry-after"))
                    etype, emsg = _error_from_body(body)
                    result.error_type = etype
                    reason = response.reason_phrase or ""
                    result.error = _redact(f"HTTP {response.status_code} {reason}: {emsg or etype or ''}", secrets)
                elif not plan.streaming:
                    body = await _read_capped(response, spec.max_response_bytes, tl)
                    received = len(body)
                    result.outcome = OK
                else:
                    ctype = response.headers.get("content-type", "")
                    if "text/event-stream" not in ctype.lower():
                        body = await _read_capped(response, ERROR_BODY_CAP, tl, truncate=True)
                        raise ProtocolError(f"expected text/event-stream, got {ctype or 'no content type'}")
                    received = await _read_stream(response, style, state, spec.max_response_bytes, tl)
                    if state.failed:
                        result.outcome = UPSTREAM_ERROR
                        result.error_type = state.upstream_error_type
                        result.error = _redact(f"error event in stream: {state.upstream_error_message}", secrets)
                    elif not state.terminal:
                        result.outcome = TRUNCATED
                        result.error = "stream ended without its terminal event"
                    else:
                        result.outcome = OK
                end = tl.last_read or now_ns()
        except TimeoutError:
            end = now_ns()
            result.outcome = TIMEOUT
            result.error = f"no complete answer within {spec.timeout_s:g} s (during {_phase_name(tl.phase)})"
        except ProtocolError as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = _redact(str(exc), secrets)
        except _TooLarge:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = f"response larger than {spec.max_response_bytes} bytes"
        except (httpcore.ConnectError, httpcore.ConnectTimeout, ssl.SSLError) as exc:
            end = now_ns()
            result.outcome = _failure_outcome(tl)
            result.error = _redact(_describe(exc), secrets)
        except (httpcore.ReadError, httpcore.RemoteProtocolError, httpcore.WriteError, httpx.StreamError) as exc:
            end = now_ns()
            if tl.phase == "body":
                # The connection ended inside the body: the stream was cut.
                result.outcome = TRUNCATED
                result.error = _redact(f"connection lost mid-stream: {_describe(exc)}", secrets)
            elif tl.phase in ("dns", "connect", "tls"):
                result.outcome = _failure_outcome(tl)
                result.error = _redact(_describe(exc), secrets)
            else:
                result.outcome = PROTOCOL_ERROR
                result.error = _redact(f"bad or missing response: {_describe(exc)}", secrets)
        except (httpcore.ProtocolError, httpcore.LocalProtocolError, httpx.HTTPError, OSError) as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = _redact(_describe(exc), secrets)
        result.total_ms = _ms(t0, end)
    finally:
        clock.current.reset(token)
        if response is not None:
            await response.aclose()
        if owned:
            await client.aclose()

    _fill(result, tl, state, received, spec, style.name, response)
    if result.outcome != OK and spec.api_key_env and not api_key:
        note = f"; environment variable {spec.api_key_env} is not set"
        result.error = ((result.error or "") + note)[:300]
    return result


def _phase_name(phase: str) -> str:
    return {
        "start": "start",
        "dns": "DNS",
        "connect": "TCP connect",
        "tls": "TLS handshake",
        "connected": "request",
        "request": "waiting for response headers",
        "body": "response body",
    }.get(phase, phase)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in text:
        return f"certificate verify failed: {getattr(exc, 'verify_message', '') or text}"
    cause = exc.__cause__ or exc.__context__
    if not text and cause is not None:
        text = str(cause)
    if isinstance(cause, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {cause.verify_message}"
    return text or type(exc).__name__


def _error_from_body(body: bytes) -> tuple[str | None, str | None]:
    import json

    try:
        payload = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        text = body.decode("utf-8", errors="replace").strip()
        return None, text[:120] or None
    return error_details(payload)


async def _read_capped(response: httpx.Response, cap: int, tl: Timeline, *, truncate: bool = False) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            if truncate:
                parts.append(chunk[: cap - (size - len(chunk))])
                break
            raise _TooLarge()
        parts.append(chunk)
    return b"".join(parts)


async def _read_stream(response: httpx.Response, style, state: StreamState, cap: int, tl: Timeline) -> int:
    parser = SSEParser()
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            raise _TooLarge()
        if state.terminal:
            # Past the terminal event only the body's end is read, so that a
            # warm connection can go back to the pool; nothing is parsed.
            continue
        # The time of the read that delivered these bytes, not of parsing.
        at = tl.last_read or now_ns()
        for item in parser.feed(chunk, at):
            if isinstance(item, SSEComment):
                style.on_comment(item, state)
                continue
            style.on_event(item, state)
            if state.failed:
                return size
            if state.terminal:
                break
    return size


def _fill(result: Measurement, tl: Timeline, state: StreamState, received: int, spec, style_name, response) -> None:
    t0 = tl.start_ns
    result.dns_ms = _ms(tl.dns_start, tl.dns_end)
    result.connect_ms = _ms(tl.connect_start, tl.connect_end)
    result.tls_ms = _ms(tl.tls_start, tl.tls_end)
    result.connection = COLD if tl.new_connection or spec.connection == COLD else WARM
    if tl.remote_addr:
        result.remote_addr = tl.remote_addr
    elif response is not None:
        stream = response.extensions.get("network_stream")
        addr = stream.get_extra_info("server_addr") if stream is not None else None
        if addr:
            result.remote_addr = addr[0]
    result.response_bytes = received or None
    if style_name == "http":
        return
    result.first_event_ms = _ms(t0, state.first_event_ns)
    result.ttft_ms = _ms(t0, state.first_token_ns)
    result.ttfat_ms = _ms(t0, state.first_answer_ns)
    times = state.token_times
    if state.usage_output_tokens is not None:
        result.output_tokens = state.usage_output_tokens
        result.tokens_estimated = False
    elif result.ttfb_ms is not None and result.http_status is not None and 200 <= result.http_status < 300:
        result.output_tokens = len(times)
        result.tokens_estimated = True
    if result.output_tokens and result.output_tokens > 1 and len(times) >= 2 and times[-1] > times[0]:
        result.tokens_per_s = round((result.output_tokens - 1) / ((times[-1] - times[0]) / 1e9), 3)
    if len(times) >= 2:
        gaps = sorted((b - a) / 1e6 for a, b in zip(times, times[1:]))
        result.itl_p50_ms = round(_percentile(gaps, 0.50), 3)
        result.itl_p95_ms = round(_percentile(gaps, 0.95), 3)
        result.itl_max_ms = round(gaps[-1], 3)
