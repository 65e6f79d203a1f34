"""The OTLP/HTTP receiver's work, without Django's request: decoding an export request and turning its GenAI
spans into observations (metrics: probes.realusers.otlp_metrics). latency/otlp_views.py is the HTTP side.

Decoding. Bodies are `application/x-protobuf` or `application/json` (OTLP's JSON mapping), parsed into the
official classes of opentelemetry-proto, optionally gzip (or deflate) compressed. Decompression is streamed and
stops past LATENCY_OTLP_MAX_DECODED_BYTES, so a small bomb cannot expand in memory. In JSON, OTLP writes trace
and span ids in hex where protobuf's JSON mapping expects base64: hex ids are converted before parsing (we keep
no ids, but a wrong id must not make a valid request undecodable). Unknown JSON fields are ignored, as the
specification requires.

Which spans count. A span is a GenAI call when it carries at least one `gen_ai.*` attribute and its
`gen_ai.operation.name` is not an agent, workflow or tool step (NOT_MODEL_CALLS: those wrap model calls that
have spans of their own, and timing them would mix a tool's latency into the model's). Other spans (HTTP, the
database, the application's own) are ignored and counted, never rejected. A GenAI span with no start time, an
end before its start, or a start outside window() (older than the retention, or more than an hour ahead) is
rejected (partial_success.rejected_spans).

What is read, and nothing else (content never is; see CONTENT_NOTE):
- provider: `gen_ai.provider.name`, else the older `gen_ai.system`;
- host: `server.address` (opentelemetry-instrumentation-openai-v2 2.4b0 with openai 3.x sends none: such calls
  match a target by model and provider, probes.realusers.matching);
- model: `gen_ai.request.model`, else `gen_ai.response.model`. The request model first: it is the name the
  application and our targets are configured with, stable when a provider moves an alias to a new dated
  version, and the metric points' attributes carry it too, so spans and metrics of one call land in one rollup
  (a dated response model still matches its target: matching accepts "gpt-4o-2024-08-06" for "gpt-4o");
- operation: `gen_ai.operation.name`; service: the resource's `service.name`;
- duration: end - start of the span;
- output tokens: `gen_ai.usage.output_tokens`, else the older `gen_ai.usage.completion_tokens`;
- error: the `error.type` attribute, else "_OTHER" (the semantic conventions' fallback) when the span's status
  is ERROR. The status message is never read: it is free text and may quote a prompt;
- time to first token, first found of (Observed.ttft_from names which):
  - `gen_ai.response.time_to_first_chunk` (seconds): the current GenAI conventions' attribute, set by
    instrumentations built on opentelemetry-util-genai's streaming handler;
  - `gen_ai.response.time_to_first_token` (seconds): its earlier, deprecated name;
  - the first span event named `gen_ai.content.completion.chunk`: OpenLLMetry's openai instrumentation adds one
    such event (no attributes) per streamed chunk, so the first one's time minus the span's start is the time
    to first chunk;
  opentelemetry-instrumentation-openai-v2 2.4b0 records none of these (its spans have no time to first chunk);
  LiteLLM sends its time to first token only as a metric (probes.realusers.otlp_metrics).
  A value below 0 or above the span's duration is dropped (NULL), not trusted.
- place: probes.realusers.location.place_for() of the resource's attributes overlaid by the span's
  (`geo.*`, `cloud.provider`/`cloud.region`), else the sender's address, else the source's default. Computed
  once per resource unless a span names a place of its own.

Resources that sent GenAI spans are remembered (SpanResource, by service.name + service.instance.id) so that
their GenAI metric points, which count the same calls again, are skipped (probes.realusers.otlp_metrics).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from probes.realusers.location import place_for
from probes.realusers.types import Observed, Place

log = logging.getLogger(__name__)

CONTENT_NOTE = (
    "Prompt and completion content (gen_ai.prompt*, gen_ai.completion*, gen_ai.input.messages, "
    "gen_ai.output.messages, gen_ai.system_instructions, message events) is never read: only the attributes "
    "named in this module are, so content cannot reach the database."
)

PROTOBUF = "protobuf"
JSON = "json"
MEDIA_TYPES = {"application/x-protobuf": PROTOBUF, "application/json": JSON}

TRACES = "traces"
METRICS = "metrics"
REQUESTS: dict[str, type[Message]] = {TRACES: ExportTraceServiceRequest, METRICS: ExportMetricsServiceRequest}
RESPONSES: dict[str, type[Message]] = {TRACES: ExportTraceServiceResponse, METRICS: ExportMetricsServiceResponse}

# Agent, workflow and tool steps: gen_ai.* spans that are not one call to a model.
NOT_MODEL_CALLS = frozenset({"execute_tool", "invoke_agent", "create_agent", "invoke_workflow"})

TTFT_ATTRIBUTES = ("gen_ai.response.time_to_first_chunk", "gen_ai.response.time_to_first_token")
CHUNK_EVENT = "gen_ai.content.completion.chunk"
ERROR_OTHER = "_OTHER"
# What a span's attributes are read for; everything else, content included, is skipped unread.
SPAN_KEYS = frozenset(
    {
        "gen_ai.provider.name",
        "gen_ai.system",
        "server.address",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.operation.name",
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "error.type",
        *TTFT_ATTRIBUTES,
    }
)
PLACE_KEYS = frozenset(
    {"geo.country.iso_code", "geo.locality.name", "geo.location.lat", "geo.location.lon", "cloud.provider",
     "cloud.region"}
)  # fmt: skip
RESOURCE_KEYS = PLACE_KEYS | {"service.name", "service.instance.id"}
# A clock a little ahead is tolerated; a start further in the future is not a call that happened.
FUTURE_SLACK = timedelta(hours=1)


class OtlpError(Exception):
    """A request answered with an error status (the view maps each subclass to its HTTP status)."""


class BadRequest(OtlpError):
    pass


class TooLarge(OtlpError):
    pass


class Unsupported(OtlpError):
    pass


# --- decoding -------------------------------------------------------------------------------------------


def encoding_of(content_type: str) -> str | None:
    """protobuf or json for an OTLP Content-Type (parameters such as charset ignored), else None."""
    return MEDIA_TYPES.get(content_type.split(";", 1)[0].strip().lower())


def decompress(body: bytes, content_encoding: str, limit: int) -> bytes:
    """The body as sent before compression, at most `limit` bytes (TooLarge past it)."""
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity", "none"):
        if len(body) > limit:
            raise TooLarge(f"the body is larger than {limit} bytes")
        return body
    if encoding == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflater = zlib.decompressobj()
    else:
        raise Unsupported(f"unsupported Content-Encoding {content_encoding!r}: send gzip or none")
    try:
        # max_length bounds what one call may produce: a bomb stops at the limit instead of filling memory.
        out = inflater.decompress(body, limit + 1)
        if len(out) > limit or inflater.unconsumed_tail:
            raise TooLarge(f"the body decompresses to more than {limit} bytes")
        if not inflater.eof:
            raise BadRequest(f"the {encoding} stream is truncated")
    except zlib.error as error:
        raise BadRequest(f"the body is not valid {encoding}: {error}") from None
    return out


_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def _hex_ids_to_base64(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            size = _ID_FIELDS.get(key)
            if size is not None and isinstance(value, str) and len(value) == 2 * size:
                # Not hex: protobuf's JSON parser reads it as base64, or refuses it.
                with contextlib.suppress(ValueError):
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                _hex_ids_to_base64(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids_to_base64(item)


def load(signal: str, data: bytes, encoding: str) -> bytes | dict:
    """The body ready for counting (probes.realusers.otlp_count) and parse(): protobuf bytes as they are, a JSON
    document decoded (its hex ids made base64)."""
    if encoding == PROTOBUF:
        return data
    name = REQUESTS[signal].DESCRIPTOR.name
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise BadRequest(f"the body is not a JSON {name} object")
    _hex_ids_to_base64(document)
    return document


def parse(signal: str, data: bytes | dict, encoding: str) -> Message:
    """The Export*ServiceRequest of a signal (TRACES or METRICS) from its decompressed body (or what load()
    made of it)."""
    if isinstance(data, bytes):
        data = load(signal, data, encoding)
    message = REQUESTS[signal]()
    if isinstance(data, bytes):
        try:
            message.ParseFromString(data)
        except (DecodeError, RecursionError) as error:
            raise BadRequest(f"the body is not a protobuf {message.DESCRIPTOR.name}: {error}") from None
        return message
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
        raise BadRequest(f"the body is not an OTLP JSON {message.DESCRIPTOR.name}: {error}") from None
    return message


def serialize(message: Message, encoding: str) -> bytes:
    if encoding == JSON:
        # OTLP JSON: lowerCamelCase keys (the default) and enums as integers.
        return json_format.MessageToJson(message, use_integers_for_enums=True, indent=None).encode()
    return message.SerializeToString()


# --- attributes -----------------------------------------------------------------------------------------


def scalar(kv: KeyValue) -> Any:
    """A string, bool, int or float attribute value; None for arrays, maps, bytes and empty values."""
    which = kv.value.WhichOneof("value")
    if which in ("string_value", "int_value", "double_value", "bool_value"):
        return getattr(kv.value, which)
    return None


def pick(attributes: Iterable[KeyValue], keys: frozenset[str]) -> dict[str, Any]:
    return {kv.key: scalar(kv) for kv in attributes if kv.key in keys}


def text(value: Any, limit: int) -> str:
    # A protobuf string may hold NUL, which no PostgreSQL text column takes: left in, it would fail the whole
    # batch's COPY instead of one odd name.
    return value.replace("\x00", "").strip()[:limit] if isinstance(value, str) else ""


def number(value: Any) -> float | None:
    """An int or float attribute (some SDKs send numbers as strings); None otherwise, and for NaN or infinity."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def resource_key(resource: Mapping[str, Any]) -> str:
    """SpanResource.key: one application instance, by service.name and service.instance.id."""
    name = str(resource.get("service.name") or "")
    instance = str(resource.get("service.instance.id") or "")
    return hashlib.sha256(f"{name}\0{instance}".encode()).hexdigest()


def ttft_key(key: str) -> str:
    """SpanResource.key marking that the instance of resource_key() `key` sent spans with a time to first
    token."""
    return hashlib.sha256(f"ttft\0{key}".encode()).hexdigest()


def from_ns(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


def window(now: datetime) -> tuple[datetime, datetime]:
    """The times a call (a span's start, a metric point's time) may have: from LATENCY_RETENTION_DAYS back to
    FUTURE_SLACK ahead. Outside them it is rejected: its raw row would be deleted at once while its hourly rollup
    stayed, kept as long as rollups are (forever by default), for an hour in 1970 or 2058."""
    from django.conf import settings

    return now - timedelta(days=settings.LATENCY_RETENTION_DAYS), now + FUTURE_SLACK


def outside(when: datetime, bounds: tuple[datetime, datetime]) -> str:
    """Why `when` is rejected (a reason for partial_success), or "" when it lies within the window."""
    if when < bounds[0]:
        return "older than the retention (LATENCY_RETENTION_DAYS)"
    if when > bounds[1]:
        return "more than an hour in the future (check the sender's clock)"
    return ""


# --- traces ---------------------------------------------------------------------------------------------


@dataclass
class TraceResult:
    observed: list[Observed] = field(default_factory=list)
    ignored: int = 0  # spans without GenAI attributes, or agent/tool steps
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    # SpanResource keys to mark as having sent spans now
    span_resources: set[str] = field(default_factory=set)

    def reject(self, reason: str) -> None:
        self.rejected += 1
        if reason not in self.reasons:
            self.reasons.append(reason)


def _ttft_ms(span: Any, values: Mapping[str, Any], total_ms: float) -> tuple[float | None, str]:
    for name in TTFT_ATTRIBUTES:
        seconds = number(values.get(name))
        if seconds is not None:
            return _plausible(seconds * 1000.0, total_ms), name
    for event in span.events:
        if event.name == CHUNK_EVENT:
            return _plausible((event.time_unix_nano - span.start_time_unix_nano) / 1e6, total_ms), CHUNK_EVENT
    return None, ""


def _plausible(ttft_ms: float, total_ms: float) -> float | None:
    return ttft_ms if 0.0 <= ttft_ms <= total_ms else None


def _span_call(
    span: Any, values: dict[str, Any], place: Place, service: str, bounds: tuple[datetime, datetime],
    result: TraceResult,
) -> Observed | None:  # fmt: skip
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start <= 0 or end < start:
        result.reject("a GenAI span needs a start time and an end no earlier than its start")
        return None
    observed_at = from_ns(start)
    why = outside(observed_at, bounds)
    if why:
        result.reject(f"a GenAI span started {why}")
        return None
    total_ms = (end - start) / 1e6
    ttft_ms, ttft_from = _ttft_ms(span, values, total_ms)
    if ttft_ms is None:
        ttft_from = ""
    tokens = number(values.get("gen_ai.usage.output_tokens", values.get("gen_ai.usage.completion_tokens")))
    error = text(values.get("error.type"), 120)
    if not error and span.status.code == Status.STATUS_CODE_ERROR:
        error = ERROR_OTHER
    return Observed(
        kind="span",
        observed_at=observed_at,
        place=place,
        provider=text(values.get("gen_ai.provider.name") or values.get("gen_ai.system"), 64),
        host=text(values.get("server.address"), 255).lower(),
        model=text(values.get("gen_ai.request.model") or values.get("gen_ai.response.model"), 200),
        operation=text(values.get("gen_ai.operation.name"), 64),
        service=service,
        ttft_ms=ttft_ms,
        ttft_from=ttft_from,
        total_ms=total_ms,
        output_tokens=int(tokens) if tokens is not None and 0 <= tokens < 2**31 else None,
        error_type=error,
    )


def read_spans(request: ExportTraceServiceRequest, client_ip: str | None, source: Any, now: datetime) -> TraceResult:
    """The GenAI calls of a trace export, placed; other spans counted as ignored."""
    result = TraceResult()
    bounds = window(now)
    for resource_spans in request.resource_spans:
        resource = pick(resource_spans.resource.attributes, RESOURCE_KEYS)
        service = text(resource.get("service.name"), 200)
        resource_place: Place | None = None
        sent_spans = sent_ttft = False
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                values: dict[str, Any] = {}
                genai = False
                for kv in span.attributes:
                    key = kv.key
                    if key.startswith("gen_ai."):
                        genai = True
                    if key in SPAN_KEYS or key in PLACE_KEYS:
                        values[key] = scalar(kv)
                if not genai or values.get("gen_ai.operation.name") in NOT_MODEL_CALLS:
                    result.ignored += 1
                    continue
                if PLACE_KEYS.isdisjoint(values):
                    if resource_place is None:
                        resource_place = place_for(resource, client_ip, source)
                    place = resource_place
                else:
                    place = place_for({**resource, **values}, client_ip, source)
                call = _span_call(span, values, place, service, bounds, result)
                if call is not None:
                    result.observed.append(call)
                    sent_spans = True
                    sent_ttft = sent_ttft or call.ttft_ms is not None
        if sent_spans:
            result.span_resources.add(resource_key(resource))
        if sent_ttft:
            result.span_resources.add(ttft_key(resource_key(resource)))
    return result


def mark_span_resources(source_id: int, keys: Iterable[str], now: datetime) -> None:
    """Remember that these resources sent GenAI spans now (one statement; rows younger than a minute are left
    alone, so a steady exporter does not rewrite its row on every batch)."""
    from django.db import connection

    from probes.models import SpanResource

    keys = sorted(keys)
    if not keys:
        return
    rows = ", ".join(["(%s, %s, %s)"] * len(keys))
    params: list[Any] = []
    for key in keys:
        params.extend([source_id, key, now])
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {SpanResource._meta.db_table} AS r (source_id, key, last_span_at) VALUES {rows} "
            "ON CONFLICT ON CONSTRAINT span_resource_one_per_key DO UPDATE SET last_span_at = EXCLUDED.last_span_at "
            "WHERE r.last_span_at < EXCLUDED.last_span_at - interval '1 minute'",
            params,
        )


@dataclass
class Outcome:
    """What one export did: the response's partial_success and the log line."""

    accepted: int = 0
    rejected: int = 0
    ignored: int = 0
    skipped_duplicate: int = 0
    calls: int = 0
    message: str = ""


def export_traces(source: Any, request: ExportTraceServiceRequest, client_ip: str | None, now: datetime) -> Outcome:
    from probes.realusers.store import record

    result = read_spans(request, client_ip, source, now)
    stored = record(source.id, result.observed, now=now)
    mark_span_resources(source.id, result.span_resources, now)
    outcome = Outcome(
        accepted=stored.observations,
        rejected=result.rejected,
        ignored=result.ignored,
        calls=stored.observations,
        message="; ".join(result.reasons),
    )
    log.info(
        "otlp traces from source %s: %d GenAI spans stored (%d matched a target), %d other spans ignored, %d rejected",
        source.id,
        stored.observations,
        stored.matched,
        result.ignored,
        result.rejected,
    )
    return outcome


def response_for(signal: str, outcome: Outcome) -> Message:
    """The Export*ServiceResponse: partial_success only when something was rejected (the specification asks
    that it be left unset on full success)."""
    response = RESPONSES[signal]()
    if outcome.rejected:
        partial = response.partial_success  # type: ignore[attr-defined]
        if signal == TRACES:
            partial.rejected_spans = outcome.rejected
        else:
            partial.rejected_data_points = outcome.rejected
        partial.error_message = outcome.message
    return response
