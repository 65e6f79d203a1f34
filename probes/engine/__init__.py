"""The probe engine: one call to an LLM API, timed phase by phase.

Plain Python (no Django, no Celery): `await measure(spec)` returns a
Measurement. Async at its core so that one process keeps hundreds of probes
in flight; `measure_sync` wraps it for callers without an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import encodings.idna  # noqa: F401  (getaddrinfo of a name imports it on first use)
import itertools
import ssl
import typing
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import h2.exceptions
import httpcore
import httpx

import probes.compat.anyio  # noqa: F401  (anyio's backend imported at start, not in a first measurement)
from probes.engine import clock, workloads
from probes.engine.clock import H2Refused, Timeline, now_ns
from probes.engine.config import ConfigProblem, Credentials, host_problem, read_credentials
from probes.engine.envpolicy import CA_UNUSABLE, WorkerEnv
from probes.engine.redact import MAX_ERROR, Redactor
from probes.engine.result import (
    COLD,
    CONFIG_ERROR,
    CONNECT_ERROR,
    DNS_ERROR,
    HTTP_1_1,
    HTTP_2_ONLY,
    HTTP_ERROR,
    OK,
    OVERLOADED,
    PROTOCOL_ERROR,
    RATE_LIMITED,
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
from probes.engine.styles.base import ProtocolError, RequestPlan, StreamState, Style, error_details
from probes.engine.transport import TimedTransport

__all__ = ["Engine", "Measurement", "ProbeSpec", "WorkerEnv", "measure", "measure_sync"]

ERROR_BODY_CAP = 64 * 1024
# What the engine can decode when a server compresses although asked not to.
DECODABLE = frozenset({"gzip", "deflate"})


class _TooLarge(Exception):
    pass


class Engine:
    """What may be built once and reused: SSL contexts and warm pools.

    Building a client or an SSL context happens here, before a call's clock
    starts, so it is never counted in a measurement.
    """

    def __init__(self, worker_env: WorkerEnv | None = None) -> None:
        # What targets may use on this host (variables, CA bundles): read once
        # here, never per call. None: this process's environment.
        self.worker_env = WorkerEnv.from_env() if worker_env is None else worker_env
        self._contexts: dict[tuple[str, bool], ssl.SSLContext] = {}
        self._warm: dict[tuple[str, str], httpx.AsyncClient] = {}
        _warm_up_process()

    def ssl_context(self, ca_bundle: str = "", http2: bool = False) -> ssl.SSLContext:
        ctx = self._contexts.get((ca_bundle, http2))
        if ctx is None:
            ctx = ssl.create_default_context()
            if ca_bundle:
                # Only a file inside the worker's CA directory, and one text
                # for every way it can fail (outside, missing, unreadable, not
                # PEM): a target must not learn what exists on the worker. Not
                # cached when it fails, so a fixed file is used at the next run.
                path, why = self.worker_env.ca_path(ca_bundle)
                if path is None:
                    raise ConfigProblem("ca_bundle", why)
                try:
                    ctx.load_verify_locations(cafile=path)
                except (ssl.SSLError, ValueError, OSError):
                    raise ConfigProblem("ca_bundle", CA_UNUSABLE) from None
            # httpcore sets the same list on every connection it opens
            # (["http/1.1", "h2"] with HTTP/2): the server picks by its own
            # preference. Set here too so the context is right on its own.
            ctx.set_alpn_protocols(["http/1.1", "h2"] if http2 else ["http/1.1"])
            self._contexts[(ca_bundle, http2)] = ctx
        return ctx

    def _client(self, spec: ProbeSpec) -> tuple[httpx.AsyncClient, bool]:
        """(client, owned): a cold call gets a client of its own, closed after."""
        if spec.connection == WARM:
            key = (spec.ca_bundle, spec.http_version)
            client = self._warm.get(key)
            if client is None:
                client = self._new_client(spec, keepalive=True)
                self._warm[key] = client
            return client, False
        return self._new_client(spec, keepalive=False), True

    def _new_client(self, spec: ProbeSpec, *, keepalive: bool) -> httpx.AsyncClient:
        http2 = spec.http_version != HTTP_1_1
        transport = TimedTransport(self.ssl_context(spec.ca_bundle, http2), keepalive=keepalive, http2=http2)
        # trust_env=False: proxies from the environment would bypass our timed
        # backend (and build SSL contexts of their own).
        return httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False, timeout=None)

    async def measure(self, spec: ProbeSpec) -> Measurement:
        """One slot's measurement: one call, or for a cached pair the second of two (probes.engine.workloads)."""
        if spec.workload == workloads.SHORT or spec.style == "http":
            return await _measure(self, spec)
        sent = dataclasses.replace(spec, prompt=workloads.prompt_for(spec.workload, spec.prompt, workloads.nonce()))
        if spec.workload != workloads.CACHED_PAIR:
            return _of_workload(await _measure(self, sent), spec)
        filling = await _measure(self, sent)
        if filling.outcome != OK:
            # The slot's row is the failed call: the measured one would have found no cache to read.
            filling.error = f"the call filling the cache failed: {filling.error or filling.outcome}"
            return _of_workload(filling, spec)
        measured = await _measure(self, sent)
        measured.warm_ttft_ms = filling.ttft_ms
        return _of_workload(measured, spec)

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
        except (
            TimeoutError,
            httpx.HTTPError,
            httpcore.NetworkError,
            httpcore.ProtocolError,
            OSError,
            ssl.SSLError,
            ConfigProblem,
            UnicodeError,
            H2Refused,
        ):
            # measure() reports what went wrong; a warm-up only says it failed.
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
    global _process_warmed  # noqa: PLW0603 -- once per process, by design
    if _process_warmed:
        return
    _process_warmed = True
    import socket

    with contextlib.suppress(OSError):
        socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)


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


def _of_workload(result: Measurement, spec: ProbeSpec) -> Measurement:
    result.workload = spec.workload
    return result


def _ms(start: int | None, end: int | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start) / 1e6, 3)


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


# An error event in the stream naming the provider's limits or load (Anthropic's types; OpenAI-compatible servers
# that stream errors use the same words).
STREAM_FAILURES = {"rate_limit_error": RATE_LIMITED, "overloaded_error": OVERLOADED}
# The headroom headers: OpenAI's (and most OpenAI-compatible providers'), then Anthropic's.
HEADROOM = {
    "ratelimit_remaining_requests": ("x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"),
    "ratelimit_remaining_tokens": ("x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining"),
}
HEADROOM_MAX = 2**31  # the columns' integer type


def _http_failure(status: int, error_type: str | None, message: str | None) -> str:
    """429 is the provider's limits; 529, or a 503 whose body says overloaded, its load; anything else an HTTP
    error."""
    if status == 429:
        return RATE_LIMITED
    said = f"{error_type or ''} {message or ''}".lower()
    if status == 529 or (status == 503 and "overload" in said):
        return OVERLOADED
    return HTTP_ERROR


def _headroom(headers: httpx.Headers, result: Measurement) -> None:
    for field_name, names in HEADROOM.items():
        for name in names:
            value = headers.get(name, "").strip()
            if value.isdigit() and int(value) < HEADROOM_MAX:
                setattr(result, field_name, int(value))
                break


def _failure_outcome(tl: Timeline) -> str:
    return {"dns": DNS_ERROR, "tls": TLS_ERROR}.get(tl.phase, CONNECT_ERROR)


async def _measure(engine: Engine, spec: ProbeSpec) -> Measurement:
    style = STYLES[spec.style]
    creds = Credentials()
    result = Measurement(connection=spec.connection)
    try:
        read_credentials(spec.api_key_env, spec.headers, creds, engine.worker_env)
        client, owned, plan, request = await _build(engine, spec, style, creds)
    except ConfigProblem as exc:
        # Nothing was sent: a stored result that says which field to fix,
        # never a crash on every run (and never the field's value).
        redact = Redactor(creds.secrets)
        result.outcome = CONFIG_ERROR
        result.error = _with_unset(str(exc), creds, redact)
        result.started_at = datetime.now(UTC).isoformat(timespec="microseconds")
        return result
    # Every value read from the environment, whatever the provider or a
    # library does with it, is kept out of the messages.
    redact = Redactor(creds.secrets)

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
                fallback = _fallback_note(spec, tl, response.http_version)
                tl.phase = "body"

                if not 200 <= response.status_code < 300:
                    result.outcome = HTTP_ERROR
                    result.retry_after_s = _retry_after(response.headers.get("retry-after"))
                    try:
                        body = await _read_capped(response, ERROR_BODY_CAP, tl, truncate=True)
                        etype, emsg = _error_from_body(body)
                    except ProtocolError as exc:  # a body compressed in a way we cannot read
                        etype, emsg = None, str(exc)
                    result.outcome = _http_failure(response.status_code, etype, emsg)
                    result.error_type = redact(etype, 100)
                    reason = response.reason_phrase or ""
                    result.error = redact(f"HTTP {response.status_code} {reason}: {emsg or etype or ''}")
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
                        result.outcome = STREAM_FAILURES.get(state.upstream_error_type or "", UPSTREAM_ERROR)
                        result.error_type = redact(state.upstream_error_type, 100)
                        result.error = redact(f"error event in stream: {state.upstream_error_message}")
                    elif not state.terminal:
                        result.outcome = TRUNCATED
                        result.error = "stream ended without its terminal event"
                    else:
                        result.outcome = OK
                if result.outcome == OK and fallback:
                    # The reason is stored with the (good) measurement, so a
                    # chart of "HTTP/2" numbers can tell which were not.
                    result.error = fallback
                end = tl.last_read or now_ns()
        except TimeoutError:
            end = now_ns()
            result.outcome = TIMEOUT
            result.error = f"no complete answer within {spec.timeout_s:g} s (during {_phase_name(tl.phase)})"
        except ProtocolError as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = redact(str(exc))
        except _TooLarge:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = f"response larger than {spec.max_response_bytes} bytes"
        except httpx.DecodingError as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            encoding = response.headers.get("content-encoding", "") if response is not None else ""
            result.error = redact(f"response body does not decode as its Content-Encoding ({encoding}) says: {exc}")
        except H2Refused as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = f"{exc} (http_version 2-only)"
        except (httpcore.ConnectError, httpcore.ConnectTimeout, ssl.SSLError) as exc:
            end = now_ns()
            result.outcome = _failure_outcome(tl)
            result.error = redact(_describe(exc))
        except h2.exceptions.InvalidBodyLengthError as exc:
            # httpcore lets h2's own errors through: over HTTP/2 a body that
            # ends short of its content-length is a cut stream.
            end = now_ns()
            result.outcome = TRUNCATED
            result.error = redact(f"response body cut short: {exc}")
        except h2.exceptions.ProtocolError as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = redact(f"HTTP/2 protocol error: {exc}")
        except (httpcore.ReadError, httpcore.RemoteProtocolError, httpcore.WriteError, httpx.StreamError) as exc:
            end = now_ns()
            if tl.phase == "body":
                # The connection ended inside the body: the stream was cut.
                result.outcome = TRUNCATED
                result.error = redact(f"connection lost mid-stream: {_describe(exc)}")
            elif tl.phase in ("dns", "connect", "tls"):
                result.outcome = _failure_outcome(tl)
                result.error = redact(_describe(exc))
            else:
                result.outcome = PROTOCOL_ERROR
                result.error = redact(f"bad or missing response: {_describe(exc)}")
        except (httpcore.ProtocolError, httpcore.LocalProtocolError, httpx.HTTPError, OSError) as exc:
            end = now_ns()
            result.outcome = PROTOCOL_ERROR
            result.error = redact(_describe(exc))
        result.total_ms = _ms(t0, end)
    finally:
        clock.current.reset(token)
        if response is not None:
            await response.aclose()
        if owned:
            await client.aclose()

    _fill(result, tl, state, received, spec, style.name, response)
    if result.outcome != OK and creds.unset:
        result.error = _with_unset(result.error or "", creds, redact)
    return result


def _with_unset(message: str, creds: Credentials, redact: Redactor) -> str:
    """The redacted message, ending with the unset variables' names: the
    likeliest cause of a failure, so the note is never the part cut off."""
    if not creds.unset:
        return redact(message)
    verb = "is" if len(creds.unset) == 1 else "are"
    note = f"; environment variable {', '.join(creds.unset)} {verb} not set"[:MAX_ERROR]
    return redact(message, MAX_ERROR - len(note)) + note


def _fallback_note(spec: ProbeSpec, tl: Timeline, negotiated: str) -> str | None:
    """Why a probe that asked for HTTP/2 was measured over another version, or None."""
    if spec.http_version == HTTP_1_1 or negotiated == "HTTP/2":
        return None
    if not spec.url.startswith("https://"):
        why = "HTTP/2 is only negotiated over TLS and the URL is http://"
    elif tl.alpn is None and not tl.new_connection:
        why = "a reused HTTP/1.1 connection"
    else:
        why = f"the server refused HTTP/2 (ALPN chose {tl.alpn or 'no protocol'})"
    return f"asked for HTTP/2, measured over {negotiated}: {why}"


async def _build(
    engine: Engine, spec: ProbeSpec, style: Style, creds: Credentials
) -> tuple[httpx.AsyncClient, bool, RequestPlan, httpx.Request]:
    """(client, owned, plan, request), or ConfigProblem: everything that can
    be wrong with the configuration shows here, before the clock starts."""
    try:
        host = urlsplit(spec.url).hostname
    except ValueError:
        raise ConfigProblem("url", "is not a valid URL") from None
    problem = host_problem(host)
    if problem:
        raise ConfigProblem("url", problem)
    if spec.http_version == HTTP_2_ONLY and not spec.url.startswith("https://"):
        # HTTP/2 is negotiated in the TLS handshake (ALPN); cleartext h2c is not probed.
        raise ConfigProblem("http_version", "HTTP/2 only is negotiated over TLS: the URL must start with https://")
    try:
        plan = style.plan(spec, creds.api_key)
    except ValueError as exc:
        # The style's own messages name what is missing (a model), no value.
        raise ConfigProblem("model" if "model" in str(exc) else "url", str(exc)) from None
    headers = {**plan.headers, **{k.lower(): v for k, v in creds.headers.items()}}
    client, owned = engine._client(spec)
    try:
        request = client.build_request(plan.method, plan.url, headers=headers, content=plan.body)
    except (httpx.InvalidURL, UnicodeError, ValueError, TypeError) as exc:
        # Checked above field by field; this guards what slipped through,
        # naming the kind of error only (its text may quote a value).
        if owned:
            await client.aclose()
        raise ConfigProblem("url", f"the request cannot be built ({type(exc).__name__})") from None
    return client, owned, plan, request


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
        # Whole: the message is cut only after secrets are redacted from it.
        text = body.decode("utf-8", errors="replace").strip()
        return None, text or None
    return error_details(payload)


def _body_chunks(response: httpx.Response) -> typing.AsyncIterator[bytes]:
    """The body as it arrives: raw, unless the server compressed it although
    we asked for identity. Then httpx decodes each raw chunk as it is read,
    so decoded bytes still carry the stamp (tl.last_read) of the raw read that
    produced them: TTFT is the arrival of the bytes holding the first token.
    An uncompressed body pays nothing for this."""
    encoding = response.headers.get("content-encoding")
    if not encoding:
        return response.aiter_raw()
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip().lower() not in ("", "identity")]
    if not codings:
        return response.aiter_raw()
    unknown = [c for c in codings if c not in DECODABLE]
    if unknown:
        raise ProtocolError(
            f"response compressed with {unknown[0]} although the probe asked for identity; it decodes only "
            f"{' and '.join(sorted(DECODABLE))}"
        )
    return response.aiter_bytes()


async def _read_capped(response: httpx.Response, cap: int, tl: Timeline, *, truncate: bool = False) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in _body_chunks(response):
        size += len(chunk)
        if size > cap:
            if truncate:
                parts.append(chunk[: cap - (size - len(chunk))])
                break
            raise _TooLarge()
        parts.append(chunk)
    return b"".join(parts)


async def _read_stream(response: httpx.Response, style: Style, state: StreamState, cap: int, tl: Timeline) -> int:
    parser = SSEParser()
    size = 0
    async for chunk in _body_chunks(response):
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


def _fill(
    result: Measurement,
    tl: Timeline,
    state: StreamState,
    received: int,
    spec: ProbeSpec,
    style_name: str,
    response: httpx.Response | None,
) -> None:
    t0 = tl.start_ns
    result.dns_ms = _ms(tl.dns_start, tl.dns_end)
    result.connect_ms = _ms(tl.connect_start, tl.connect_end)
    result.tls_ms = _ms(tl.tls_start, tl.tls_end)
    result.request_sent_ms = _ms(t0, tl.request_sent)
    if result.request_sent_ms is not None and result.ttfb_ms is not None:
        # The write's return is seen in user space, the answer's arrival is the kernel's stamp: on a near server
        # the answer can be stamped before the write call has returned. The request was sent by then.
        result.request_sent_ms = min(result.request_sent_ms, result.ttfb_ms)
    result.connection = COLD if tl.new_connection or spec.connection == COLD else WARM
    if tl.remote_addr:
        result.remote_addr = tl.remote_addr
    elif response is not None:
        stream = response.extensions.get("network_stream")
        addr = stream.get_extra_info("server_addr") if stream is not None else None
        if addr:
            result.remote_addr = addr[0]
    result.response_bytes = received or None
    if response is not None:
        _headroom(response.headers, result)
    if style_name == "http":
        return
    result.first_event_ms = _ms(t0, state.first_event_ns)
    result.ttft_ms = _ms(t0, state.first_token_ns)
    result.ttfat_ms = _ms(t0, state.first_answer_ns)
    for name, value in state.usage.items():
        setattr(result, name, value)
    times = state.token_times
    if state.usage_output_tokens is not None:
        result.output_tokens = state.usage_output_tokens
        result.tokens_estimated = False
    elif result.ttfb_ms is not None and result.http_status is not None and 200 <= result.http_status < 300:
        result.output_tokens = len(times)
        result.tokens_estimated = True
    if result.output_tokens:
        result.tokens_per_s = _tokens_per_s(result.output_tokens, times)
    if len(times) >= 2:
        gaps = sorted((b - a) / 1e6 for a, b in itertools.pairwise(times))
        result.itl_p50_ms = round(_percentile(gaps, 0.50), 3)
        result.itl_p95_ms = round(_percentile(gaps, 0.95), 3)
        result.itl_max_ms = round(gaps[-1], 3)


# A rate needs the stream spread over time we can measure: at least this
# long between the read of the first token and the read of the last, and
# tokens in at least this many reads after the first one.
MIN_RATE_SPAN_NS = 10_000_000
MIN_RATE_READS = 2


def _tokens_per_s(output_tokens: int, times: list[int]) -> float | None:
    """Output tokens per second of generation, or None when the timing
    cannot support a rate.

    vLLM's benchmark definition (1 / TPOT): the tokens after the first over
    the time from the first token to the end of generation. Our times are
    stamps of socket reads, so tokens that share the first token's read
    arrived at some unknown time before it: they are left out of the count
    as the first token is (otherwise a read that came late and held most of
    the stream, followed by a last token microseconds later, gave hundreds of
    thousands of tok/s). With usage counting more tokens than events
    streamed (several tokens per event), each event stands for its share.
    A stream that arrived in one read, or in reads microseconds apart (a
    burst, a busy worker catching up), has no rate to tell: None, not a
    huge number."""
    if len(times) < 2:
        return None
    first, last = times[0], times[-1]
    later = [t for t in times if t > first]
    if len(set(later)) < MIN_RATE_READS or last - first < MIN_RATE_SPAN_NS:
        return None
    tokens = len(later) * output_tokens / len(times)
    return round(tokens / ((last - first) / 1e9), 3)
