"""How many spans or metric points an OTLP export holds, counted before it is parsed.

Parsing builds every span in memory (upb's C objects: about 420 bytes for a GenAI span of three attributes), and
reading them builds Python objects on top; a body under both size caps can hold 100,000 spans. The receiver
refuses an export over LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST and counts the rest against the source's
budget, so it counts first, from the protobuf wire format: each repeated message is a length-delimited field, so
the spans are counted by hopping from one field's header to the next, never decoding a span. The count stops
one past the cap, so a huge export costs no more to refuse than one at the cap.

The paths counted (opentelemetry-proto's field numbers):
- traces: ExportTraceServiceRequest.resource_spans (1) > ResourceSpans.scope_spans (2) > ScopeSpans.spans (2);
- metrics: ExportMetricsServiceRequest.resource_metrics (1) > ResourceMetrics.scope_metrics (2) >
  ScopeMetrics.metrics (2) > Metric.gauge (5) | sum (7) | histogram (9) | exponential_histogram (10) |
  summary (11) > data_points (1).
A JSON export is counted while json.loads reads it, each object dropped once read (count_json): the document is
never built whole, which for JSON costs many times the body's size in Python objects.

Malformed wire data (a length past the end, a varint of more than ten bytes, a group) is BadRequest, as
parsing would have said."""

from __future__ import annotations

import json
from typing import Any

from probes.realusers.otlp import JSON, METRICS, REQUESTS, TRACES, BadRequest

# Wire types (protobuf encoding).
VARINT, I64, LEN, I32 = 0, 1, 2, 5
# Metric's data fields, each a message whose field 1 is its repeated data points.
METRIC_DATA_FIELDS = frozenset({5, 7, 9, 10, 11})


class _Malformed(ValueError):
    pass


def _varint(data: memoryview, i: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= end or shift > 63:
            raise _Malformed("a varint runs past its field")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _fields(data: memoryview, start: int, end: int):
    """(field number, start, end) of each length-delimited field in data[start:end]; others are skipped."""
    i = start
    while i < end:
        tag, i = _varint(data, i, end)
        number, wire = tag >> 3, tag & 7
        if wire == VARINT:
            _, i = _varint(data, i, end)
        elif wire == I64:
            i += 8
        elif wire == I32:
            i += 4
        elif wire == LEN:
            length, i = _varint(data, i, end)
            if i + length > end:
                raise _Malformed("a field runs past its message")
            yield number, i, i + length
            i += length
            continue
        else:
            raise _Malformed(f"wire type {wire} in field {number}")
        if i > end:
            raise _Malformed("a field runs past its message")


def _count_protobuf(data: memoryview, path: tuple[Any, ...], start: int, end: int, stop: int, counted: int) -> int:
    """Add the fields at `path` (a field number, or a set of them, per level) below data[start:end]."""
    wanted, rest = path[0], path[1:]
    for number, s, e in _fields(data, start, end):
        if number != wanted and not (isinstance(wanted, frozenset) and number in wanted):
            continue
        counted = counted + 1 if not rest else _count_protobuf(data, rest, s, e, stop, counted)
        if counted > stop:
            return counted
    return counted


PATHS = {TRACES: (1, 2, 2), METRICS: (1, 2, 2, METRIC_DATA_FIELDS, 1)}


def count_protobuf(signal: str, data: bytes, stop: int) -> int:
    """Spans (TRACES) or data points (METRICS) in a protobuf export; past `stop`, any number above it."""
    view = memoryview(data)
    try:
        return _count_protobuf(view, PATHS[signal], 0, len(view), stop, 0)
    except _Malformed as error:
        raise BadRequest(f"the body is not a protobuf {REQUESTS[signal].DESCRIPTOR.name}: {error}") from None


class _Over(Exception):
    pass


def count_json(signal: str, data: bytes, stop: int) -> int:
    """Spans or data points of an OTLP JSON export, counted while the JSON is read but without building it: each
    object is dropped (None) as soon as it is read, after its `spans` (or `dataPoints`) list is counted. Every span
    the export holds sits in such a list, so none escapes the count; an unknown field of that name elsewhere only
    counts more."""
    keys = ("spans",) if signal == TRACES else ("dataPoints", "data_points")
    counted = 0

    def drop(pairs: list[tuple[str, Any]]) -> None:
        nonlocal counted
        for key, value in pairs:
            if key in keys and isinstance(value, list):
                counted += len(value)
                if counted > stop:
                    raise _Over
        return None

    try:
        json.loads(data, object_pairs_hook=drop)
    except _Over:
        return counted
    except (ValueError, RecursionError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None
    return counted


def count(signal: str, data: bytes, encoding: str, stop: int) -> int:
    """Spans (TRACES) or data points (METRICS) in a decompressed export body; past `stop`, any number above it."""
    if encoding == JSON:
        return count_json(signal, data, stop)
    return count_protobuf(signal, data, stop)
