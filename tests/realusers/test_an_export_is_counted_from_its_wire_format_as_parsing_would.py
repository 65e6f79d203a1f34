"""The spans and metric points of an export are counted from its protobuf wire format, without parsing it, to the
number parsing would find: several resources and scopes, every kind of metric (gauge, sum, histogram,
exponential histogram, summary), unknown fields skipped; the JSON mapping alike. A count stops one past its limit,
and broken wire data is bad data (400), as parsing would have said."""

from __future__ import annotations

import json

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from probes.realusers.otlp import JSON, METRICS, PROTOBUF, TRACES, BadRequest
from probes.realusers.otlp_count import count
from tests.realusers_otlp.conftest import trace_request


def _traces():
    a = trace_request([{"start": 1, "end": 2}] * 3)
    b = trace_request([{"start": 1, "end": 2}] * 4, resource={"service.name": "other"})
    a.resource_spans.extend(b.resource_spans)
    a.resource_spans[0].scope_spans.add().spans.add(name="one more")
    a.resource_spans[0].scope_spans.add()  # a scope with no spans
    return a, 8


def _metrics():
    request = ExportMetricsServiceRequest()
    for _ in range(2):
        scope = request.resource_metrics.add().scope_metrics.add()
        scope.metrics.add(name="g").gauge.data_points.add(as_double=1.0)
        s = scope.metrics.add(name="s").sum
        s.data_points.add(as_int=1)
        s.data_points.add(as_int=2)
        scope.metrics.add(name="h").histogram.data_points.add(count=1)
        scope.metrics.add(name="e").exponential_histogram.data_points.add(count=1)
        scope.metrics.add(name="q").summary.data_points.add(count=1)
        scope.metrics.add(name="empty")
    return request, 12


@pytest.mark.parametrize(("signal", "build"), [(TRACES, _traces), (METRICS, _metrics)])
def test_the_count_is_what_parsing_finds(signal, build):
    message, expected = build()
    data = message.SerializeToString() + b"\xf8\x07\x01"  # an unknown varint field 127 at the end
    assert count(signal, data, PROTOBUF, stop=1000) == expected
    document = json.loads(json_format.MessageToJson(message))
    document["unknownField"] = {"nested": [{"deeper": 1}]}
    assert count(signal, json.dumps(document).encode(), JSON, stop=1000) == expected
    assert count(signal, data, PROTOBUF, stop=2) == 3
    assert count(signal, json.dumps(document).encode(), JSON, stop=2) == 3


def test_broken_wire_data_is_bad_data():
    data = _traces()[0].SerializeToString()
    with pytest.raises(BadRequest, match="ExportTraceServiceRequest"):
        count(TRACES, data[:-5], PROTOBUF, stop=1000)
    with pytest.raises(BadRequest):
        count(METRICS, b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", PROTOBUF, stop=1000)
    with pytest.raises(BadRequest, match="not JSON"):
        count(TRACES, b'{"resourceSpans": [', JSON, stop=1000)
