"""Exports are authenticated by the source's secret token in `Authorization: Bearer <token>`: no token, a
wrong one, a rotated-away one or a disabled source's is answered 401, before the body is read."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from probes.models import IngestSource, Observation
from probes.realusers.sources import rotate
from tests.realusers_otlp.conftest import trace_request


def test_bad_tokens_are_401(site, source, post):
    t = time.time_ns()
    body = trace_request(
        [{"start": t, "end": t + 1_000_000, "attributes": {"gen_ai.request.model": "m"}}]
    ).SerializeToString()
    assert post(site, "traces", body).status_code == 401
    assert post(site, "traces", body, token="lat_not-a-real-token").status_code == 401
    assert post(site, "metrics", body, token=source.token[:-1]).status_code == 401

    old = source.token
    new = rotate(source)
    assert post(site, "traces", body, token=old).status_code == 401
    assert post(site, "traces", ExportTraceServiceRequest().SerializeToString(), token=new).status_code == 200

    IngestSource.objects.filter(pk=source.pk).update(enabled=False)
    assert post(site, "traces", body, token=new).status_code == 401
    assert Observation.objects.count() == 0
