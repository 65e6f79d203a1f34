"""GenAI metric histograms of an OTLP metrics export, as calls added to the real users' rollups.

Which metrics (all histograms, seconds unless their unit says "ms"):
- "total" (a call and its duration): `gen_ai.client.operation.duration`, from the GenAI conventions; sent by
  opentelemetry-instrumentation-openai-v2, OpenLLMetry and LiteLLM alike;
- "ttft" (values only: calls are counted from "total" alone, probes.realusers.store):
  `gen_ai.client.operation.time_to_first_chunk` (the conventions' name, opentelemetry-util-genai),
  `gen_ai.client.response.time_to_first_token` (LiteLLM's OpenTelemetry callback),
  `gen_ai.server.time_to_first_token` (OpenLLMetry's openai instrumentation records the time to its first
  streamed chunk, measured in the client, under this name).
Other metrics are ignored; points of these metrics that cannot be read are rejected (partial_success), and so are
points whose time lies outside probes.realusers.otlp.window() (older than the retention, or more than an hour
ahead, as spans), that start after their time, or whose counts add up to 2^31 or more (MAX_COUNT).

Histogram and ExponentialHistogram points alike become one representative value per non-empty bucket, with the
bucket's count: the geometric midpoint of the bucket's bounds, narrowed by the point's min and max when given
(every value of the point lies within them). The geometric midpoint because our histograms are log-spaced
(probes.histogram) and the conventions' advisory bounds roughly double from one to the next: it is within a
factor sqrt(hi/lo) of any value in the bucket, the least worst-case relative error. The open first bucket
(up to the first bound) is taken from the point's min when given, else from half the first bound; the open last
bucket is the point's max when given, else the last bound (an under-estimate rather than an invented value).
Points with errors are those whose `error.type` attribute is set: their count is the rollup's error count.

Temporality. The SDKs export cumulative points by default: each carries every call since the stream's start.
Each stream (this source, the resource's attributes, the scope, the metric, the point's attributes and bucket
bounds) keeps its last cumulative point in MetricStream, and a new point is stored as its difference from it.
A point with a new start time (the application restarted) or with counts lower than before is taken whole; a
point no newer than the last one adds nothing. The rows are locked (inserted if new, then SELECT ... FOR UPDATE
in key order, in the transaction that stores the calls), so two web processes given the same stream's exports
never count a difference twice. DELTA points are taken as they are.

Not counting a call twice. An application instance that also sends GenAI spans (SpanResource, marked by
probes.realusers.otlp within the last SPAN_RESOURCE_WINDOW) already had each call counted from its span, so
its duration points are skipped (counted as skipped-duplicate in the log). Its time-to-first-token points are
skipped only when its spans carried a time to first token themselves (a separate SpanResource key): the
official openai-v2 instrumentation's spans carry none, and then the metric is the only source of TTFT values,
which adds values without adding calls. Skipped cumulative points still move their stream forward, so the
calls they held are never counted later either.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from probes.realusers.location import place_for
from probes.realusers.otlp import (
    PLACE_KEYS,
    Outcome,
    from_ns,
    outside,
    pick,
    resource_key,
    scalar,
    text,
    ttft_key,
    window,
)
from probes.realusers.types import ObservedHistogram

log = logging.getLogger(__name__)

DURATION = "gen_ai.client.operation.duration"
TTFT_METRICS = (
    "gen_ai.client.operation.time_to_first_chunk",
    "gen_ai.client.response.time_to_first_token",
    "gen_ai.server.time_to_first_token",
)
METRIC_OF = {DURATION: "total", **dict.fromkeys(TTFT_METRICS, "ttft")}
# To milliseconds. The conventions define these histograms in seconds; an empty unit is taken as seconds.
UNIT_FACTORS = {"s": 1000.0, "": 1000.0, "ms": 1.0}
SPAN_RESOURCE_WINDOW = timedelta(hours=24)
POINT_KEYS = frozenset(
    {"gen_ai.provider.name", "gen_ai.system", "server.address", "gen_ai.request.model", "gen_ai.response.model",
     "error.type"}
) | PLACE_KEYS  # fmt: skip
NEW_STREAM = -1  # MetricStream.start_time_ns of a row made for a stream not seen before
ZERO = "z"  # the exponential histogram's zero bucket
# Calls one point may add: the rollups' counts are PostgreSQL integers (2^31 - 1 at most), and no application
# makes two billion LLM calls between two exports.
MAX_COUNT = 2**31


@dataclass
class _Point:
    """One histogram point, its buckets keyed by str(index) (and ZERO), ready for the stream arithmetic."""

    metric: str  # "total" | "ttft"
    name: str  # the OTLP metric name
    key: str  # MetricStream.key
    resource: str  # resource_key() of its resource
    cumulative: bool
    start_ns: int
    time_ns: int
    factor: float  # to ms
    counts: dict[str, int]
    scale: int | None  # exponential histograms' scale; None for explicit bounds
    bounds: list[float]  # explicit bounds
    minimum: float | None
    maximum: float | None
    attributes: dict[str, Any]
    place_attributes: dict[str, Any]


@dataclass
class _Read:
    points: list[_Point] = field(default_factory=list)
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)

    def reject(self, reason: str, n: int = 1) -> None:
        self.rejected += n
        if reason not in self.reasons:
            self.reasons.append(reason)


def _stream_key(resource: list, scope: str, name: str, attributes: Mapping[str, Any], layout: Any) -> str:
    blob = json.dumps([resource, scope, name, sorted(attributes.items()), layout], default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _read(request: ExportMetricsServiceRequest, now: datetime) -> _Read:
    read = _Read()
    allowed = window(now)
    for resource_metrics in request.resource_metrics:
        everything = sorted((kv.key, scalar(kv)) for kv in resource_metrics.resource.attributes)
        resource = dict(everything)
        rkey = resource_key(resource)
        place_attributes = {k: v for k, v in resource.items() if k in PLACE_KEYS}
        for scope_metrics in resource_metrics.scope_metrics:
            scope = scope_metrics.scope.name
            for metric in scope_metrics.metrics:
                kind = METRIC_OF.get(metric.name)
                if kind is None:
                    continue
                data = metric.WhichOneof("data")
                factor = UNIT_FACTORS.get(metric.unit.strip())
                points = getattr(metric, data).data_points if data else []
                if data not in ("histogram", "exponential_histogram"):
                    read.reject(f"{metric.name} must be a histogram", len(points))
                    continue
                if factor is None:
                    read.reject(f"{metric.name} has unit {metric.unit!r}: expected s or ms", len(points))
                    continue
                temporality = getattr(metric, data).aggregation_temporality
                if temporality == AggregationTemporality.AGGREGATION_TEMPORALITY_UNSPECIFIED:
                    read.reject(f"{metric.name} has no aggregation temporality", len(points))
                    continue
                cumulative = temporality == AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
                for p in points:
                    attributes = pick(p.attributes, POINT_KEYS)
                    all_attributes = {kv.key: scalar(kv) for kv in p.attributes}
                    if p.time_unix_nano <= 0:
                        read.reject("a histogram point needs its time")
                        continue
                    why = outside(from_ns(p.time_unix_nano), allowed)
                    if why:
                        read.reject(f"a histogram point's time is {why}")
                        continue
                    if p.start_time_unix_nano > p.time_unix_nano:
                        read.reject("a histogram point's start time is after its time")
                        continue
                    if data == "histogram":
                        bounds = list(p.explicit_bounds)
                        if not p.bucket_counts or len(p.bucket_counts) != len(bounds) + 1:
                            read.reject("a histogram point needs bucket counts, one more than its bounds")
                            continue
                        if any(b <= a for a, b in itertools.pairwise(bounds)):
                            read.reject("a histogram point's bounds must increase")
                            continue
                        counts = {str(i): int(n) for i, n in enumerate(p.bucket_counts) if n}
                        scale: int | None = None
                        layout: Any = bounds
                    else:
                        bounds = []
                        scale = int(p.scale)
                        if not -10 <= scale <= 20:
                            read.reject("an exponential histogram point's scale must be within -10..20")
                            continue
                        counts = {
                            str(p.positive.offset + i): int(n) for i, n in enumerate(p.positive.bucket_counts) if n
                        }
                        if p.zero_count:
                            counts[ZERO] = int(p.zero_count)
                        layout = "exponential"
                    if sum(counts.values()) >= MAX_COUNT:
                        read.reject(f"a histogram point's counts must add up to less than {MAX_COUNT}")
                        continue
                    read.points.append(
                        _Point(
                            metric=kind,
                            name=metric.name,
                            key=_stream_key(everything, scope, metric.name, all_attributes, layout),
                            resource=rkey,
                            cumulative=cumulative,
                            start_ns=int(p.start_time_unix_nano),
                            time_ns=int(p.time_unix_nano),
                            factor=factor,
                            counts=counts,
                            scale=scale,
                            bounds=bounds,
                            minimum=p.min if p.HasField("min") else None,
                            maximum=p.max if p.HasField("max") else None,
                            attributes=attributes,
                            place_attributes={
                                **place_attributes,
                                **{k: v for k, v in attributes.items() if k in PLACE_KEYS},
                            },
                        )
                    )
    return read


def _coarser(counts: Mapping[str, int], by: int) -> dict[str, int]:
    """Exponential buckets at a scale `by` lower: 2**by neighbouring buckets become one."""
    out: dict[str, int] = {}
    for k, n in counts.items():
        key = k if k == ZERO else str(int(k) >> by)
        out[key] = out.get(key, 0) + n
    return out


def _delta(point: _Point, stream: Any) -> dict[str, int] | None:
    """What the point adds to its stream's last point: None when nothing (an old or repeated point)."""
    if not point.cumulative:
        return point.counts
    if stream.start_time_ns != point.start_ns:
        return point.counts  # a new stream, or the application restarted
    if point.time_ns <= stream.last_time_ns:
        return None
    previous = stream.bucket_counts if isinstance(stream.bucket_counts, dict) else {}
    before: dict[str, int] = dict(previous.get("counts", {}))
    now = point.counts
    old_scale = previous.get("scale")
    if point.scale is not None and isinstance(old_scale, int) and old_scale != point.scale:
        # The SDK lowered (or a new one raised) the scale: compare both at the coarser one, and read the
        # difference's buckets at that scale.
        low = min(old_scale, point.scale)
        before = _coarser(before, old_scale - low)
        now = _coarser(now, point.scale - low)
        point.scale = low
    delta = {k: now.get(k, 0) - before.get(k, 0) for k in now.keys() | before.keys()}
    if any(n < 0 for n in delta.values()):
        return now  # counts went down without a new start time: a reset, taken whole
    return {k: n for k, n in delta.items() if n}


def _bounds_of(point: _Point, key: str) -> tuple[float | None, float | None]:
    if key == ZERO:
        return 0.0, 0.0
    i = int(key)
    if point.scale is not None:
        base = 2.0 ** (2.0**-point.scale)
        try:
            return base**i, base ** (i + 1)
        except OverflowError:
            return None, None
    lo = point.bounds[i - 1] if i > 0 else None
    hi = point.bounds[i] if i < len(point.bounds) else None
    return lo, hi


def representative(lo: float | None, hi: float | None, minimum: float | None, maximum: float | None) -> float:
    """One value for a bucket's calls (in the point's unit): see the module's docstring."""
    low = lo if lo is not None else minimum
    if minimum is not None and low is not None:
        low = max(low, minimum)
    high = hi if hi is not None else (maximum if maximum is not None else lo)
    if maximum is not None and high is not None:
        high = min(high, maximum)
    if low is None:
        return max(0.0, (high or 0.0) / 2)
    if high is None or high < low:
        high = low
    low, high = max(0.0, low), max(0.0, high)
    return math.sqrt(low * high) if low > 0 else high / 2


def _histogram(point: _Point, delta: Mapping[str, int], client_ip: str | None, source: Any) -> ObservedHistogram:
    counts = []
    for key, n in delta.items():
        lo, hi = _bounds_of(point, key)
        value = representative(lo, hi, point.minimum, point.maximum) * point.factor
        if math.isfinite(value):
            counts.append((value, n))
    a = point.attributes
    return ObservedHistogram(
        metric=point.metric,
        hour_of=from_ns(point.time_ns),
        place=place_for(point.place_attributes, client_ip, source),
        host=text(a.get("server.address"), 255).lower(),
        model=text(a.get("gen_ai.request.model") or a.get("gen_ai.response.model"), 200),
        provider=text(a.get("gen_ai.provider.name") or a.get("gen_ai.system"), 64),
        counts=counts,
        errors=sum(delta.values()) if point.metric == "total" and text(a.get("error.type"), 120) else 0,
    )


def export_metrics(source: Any, request: ExportMetricsServiceRequest, client_ip: str | None, now: datetime) -> Outcome:
    from probes.models import MetricStream, SpanResource
    from probes.realusers.store import record

    read = _read(request, now)
    outcome = Outcome(rejected=read.rejected, message="; ".join(read.reasons))
    if not read.points:
        return outcome
    resources = {p.resource for p in read.points}
    keys = resources | {ttft_key(r) for r in resources}
    recent = set(
        SpanResource.objects.filter(
            source_id=source.id, key__in=keys, last_span_at__gte=now - SPAN_RESOURCE_WINDOW
        ).values_list("key", flat=True)
    )
    histograms = []
    with transaction.atomic():
        stream_keys = sorted({p.key for p in read.points if p.cumulative})
        MetricStream.objects.bulk_create(
            [
                MetricStream(source_id=source.id, key=k, start_time_ns=NEW_STREAM, last_time_ns=NEW_STREAM, count=0)
                for k in stream_keys
            ],
            ignore_conflicts=True,
        )
        streams = {
            s.key: s
            for s in MetricStream.objects.select_for_update()
            .filter(source_id=source.id, key__in=stream_keys)
            .order_by("key")
        }
        for point in sorted(read.points, key=lambda p: (p.key, p.time_ns)):
            stream = streams.get(point.key)
            state = {"scale": point.scale, "counts": point.counts}  # before _delta may coarsen the scale
            delta = _delta(point, stream)
            if stream is not None and delta is not None:
                stream.start_time_ns = point.start_ns
                stream.last_time_ns = point.time_ns
                stream.count = sum(point.counts.values())
                stream.bucket_counts = state
                stream.save(update_fields=["start_time_ns", "last_time_ns", "count", "bucket_counts", "updated_at"])
            outcome.accepted += 1
            if not delta:
                continue
            duplicate_key = point.resource if point.metric == "total" else ttft_key(point.resource)
            if duplicate_key in recent:
                outcome.skipped_duplicate += 1
                continue
            histograms.append(_histogram(point, delta, client_ip, source))
        stored = record(source.id, histograms=histograms, now=now)
    outcome.calls = stored.histogram_calls
    log.info(
        "otlp metrics from source %s: %d GenAI histogram points accepted, %d calls added, %d skipped-duplicate "
        "(their resource sends GenAI spans), %d rejected",
        source.id,
        outcome.accepted,
        stored.histogram_calls,
        outcome.skipped_duplicate,
        outcome.rejected,
    )
    return outcome
