"""OTLP/HTTP receiver: POST /otlp/v1/traces and /otlp/v1/metrics. Thin: the work is probes.realusers.otlp and
probes.realusers.otlp_metrics.

Public (exporters have no session) but authenticated by an ingest source's token in `Authorization: Bearer
<token>`, which every OTLP exporter can send (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>);
csrf-exempt for the same reason. Answers as the OTLP specification says: 200 with an Export*ServiceResponse in
the request's encoding (partial_success set only when something was rejected); a google.rpc.Status body for
every error: 400 undecodable, 401 no or wrong token, 405 not a POST, 413 over LATENCY_OTLP_MAX_BODY_BYTES (or
LATENCY_OTLP_MAX_DECODED_BYTES once decompressed, or more spans or points than
LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST), 415 an unsupported Content-Type or Content-Encoding, 429 with
Retry-After over the source's spans and points per minute (probes.realusers.ratelimit), 503 with Retry-After when
the process's decode slots stay taken. A disabled source's token is refused like a wrong one (401): the answer
does not tell whether a token ever existed.

The checks run cheapest first, and the body is read only once the sender is known, its minute not spent, and a
decode slot taken: the Content-Length header is checked before reading, the read itself stops one byte past the
cap, and the spans or points are counted (probes.realusers.otlp_count) before any is built.

Error messages are for developers reading an exporter's log, in English as the specification asks (not
translated)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from google.rpc import code_pb2, status_pb2

from probes.realusers import otlp, otlp_count, ratelimit
from probes.realusers.location import client_address
from probes.realusers.otlp_metrics import export_metrics
from probes.realusers.sources import authenticate, tally

CONTENT_TYPES = {otlp.PROTOBUF: "application/x-protobuf", otlp.JSON: "application/json"}


def _status(http: int, code: int, message: str, encoding: str = otlp.PROTOBUF) -> HttpResponse:
    body = otlp.serialize(status_pb2.Status(code=code, message=message), encoding)
    return HttpResponse(body, status=http, content_type=CONTENT_TYPES[encoding])


def _token(request: HttpRequest) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _content_length(request: HttpRequest) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


def _throttled(message: str, retry_after: int, encoding: str, http: int = 429) -> HttpResponse:
    # UNAVAILABLE with Retry-After: OTLP/HTTP's retryable throttling answer; exporters wait that long.
    response = _status(http, code_pb2.UNAVAILABLE, message, encoding)
    response["Retry-After"] = str(retry_after)
    return response


class DecodeSlots:
    """A process's LATENCY_OTLP_DECODE_SLOTS. A body takes one, a JSON body two: json.loads holds its text twice
    (the bytes and the str it decodes them to) besides what it reads, about twice a protobuf body's peak.
    Waiting is bounded (the caller's timeout), so a burst is told to retry rather than queued without end."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.free = size
        self._changed = threading.Condition()

    def acquire(self, weight: int, timeout: float) -> bool:
        weight = min(weight, self.size)
        with self._changed:
            if not self._changed.wait_for(lambda: self.free >= weight, timeout):
                return False
            self.free -= weight
            return True

    def release(self, weight: int) -> None:
        with self._changed:
            self.free += min(weight, self.size)
            self._changed.notify_all()


_slots: dict[int, DecodeSlots] = {}  # by size: one set per process
_slots_lock = threading.Lock()


def decode_slots() -> DecodeSlots:
    """This process's slots: made on first use (a test's settings may change their number)."""
    with _slots_lock:
        size = settings.LATENCY_OTLP_DECODE_SLOTS
        if size not in _slots:
            _slots[size] = DecodeSlots(size)
        return _slots[size]


def _export(request: HttpRequest, signal: str) -> HttpResponse:
    encoding = otlp.encoding_of(request.content_type or "")
    if encoding is None:
        return _status(415, code_pb2.INVALID_ARGUMENT, "send Content-Type application/x-protobuf or application/json")
    limit = settings.LATENCY_OTLP_MAX_BODY_BYTES
    length = _content_length(request)
    if length is None:
        return _status(400, code_pb2.INVALID_ARGUMENT, "Content-Length is not a number", encoding)
    if length > limit:
        return _status(413, code_pb2.INVALID_ARGUMENT, f"the body is larger than {limit} bytes", encoding)
    source = authenticate(_token(request))
    if source is None:
        return _status(401, code_pb2.UNAUTHENTICATED, "send an ingest token: Authorization: Bearer <token>", encoding)
    # A source whose minute is spent is told so before its body is read.
    retry_after = ratelimit.otlp_spent(source.id)
    if retry_after is not None:
        return _throttled("over this source's spans and points per minute; retry later", retry_after, encoding)
    slots = decode_slots()
    weight = 2 if encoding == otlp.JSON else 1
    # Bodies are read, decoded and stored a few at a time per process: what bounds the receiver's memory
    # whatever the number of exports arriving at once.
    if not slots.acquire(weight, timeout=settings.LATENCY_OTLP_DECODE_WAIT_SECONDS):
        return _throttled("the receiver is busy; retry later", 1, encoding, http=503)
    try:
        return _decode_and_store(request, signal, encoding, source)
    finally:
        slots.release(weight)


def _decode_and_store(request: HttpRequest, signal: str, encoding: str, source) -> HttpResponse:
    limit = settings.LATENCY_OTLP_MAX_BODY_BYTES
    # request.read(), not request.body: the body is capped here (one byte past the limit tells it was larger),
    # whatever DATA_UPLOAD_MAX_MEMORY_SIZE says for form posts.
    body = request.read(limit + 1)
    if len(body) > limit:
        return _status(413, code_pb2.INVALID_ARGUMENT, f"the body is larger than {limit} bytes", encoding)
    now = datetime.now(UTC)
    cap = settings.LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST
    what = "spans" if signal == otlp.TRACES else "data points"
    try:
        data = otlp.decompress(
            body, request.headers.get("Content-Encoding", ""), settings.LATENCY_OTLP_MAX_DECODED_BYTES
        )
        del body
        items = otlp_count.count(signal, data, encoding, stop=cap)
        if items > cap:
            return _status(
                413,
                code_pb2.INVALID_ARGUMENT,
                f"more than {cap} {what} in one request: lower the exporter's batch size",
                encoding,
            )
        retry_after = ratelimit.admit_otlp(source.id, items, now)
        if retry_after is not None:
            return _throttled(
                f"{items} {what} would exceed this source's spans and points per minute; retry later",
                retry_after,
                encoding,
            )
        message = otlp.parse(signal, data, encoding)
        del data
    except otlp.TooLarge as error:
        return _status(413, code_pb2.INVALID_ARGUMENT, str(error), encoding)
    except otlp.Unsupported as error:
        return _status(415, code_pb2.INVALID_ARGUMENT, str(error), encoding)
    except otlp.BadRequest as error:
        return _status(400, code_pb2.INVALID_ARGUMENT, str(error), encoding)
    ip = client_address(request)
    if signal == otlp.TRACES:
        outcome = otlp.export_traces(source, message, ip, now)  # type: ignore[arg-type]
    else:
        outcome = export_metrics(source, message, ip, now)  # type: ignore[arg-type]
    del message
    tally(source.id, calls=outcome.calls, ignored=outcome.ignored, rejected=outcome.rejected,
          reason=outcome.message, now=now)  # fmt: skip
    response = otlp.response_for(signal, outcome)
    return HttpResponse(otlp.serialize(response, encoding), content_type=CONTENT_TYPES[encoding])


@csrf_exempt
@require_POST
def traces(request: HttpRequest) -> HttpResponse:
    return _export(request, otlp.TRACES)


@csrf_exempt
@require_POST
def metrics(request: HttpRequest) -> HttpResponse:
    return _export(request, otlp.METRICS)
