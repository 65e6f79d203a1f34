"""An export of more spans or metric points than LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST is answered 413
(not retryable: the exporter's batch size must come down) and nothing of it is stored; one at the cap is taken.
Protobuf and JSON alike, traces and metrics alike (a metric's points are counted, whatever the metric)."""

from __future__ import annotations

import json

import pytest
from google.rpc import status_pb2

from probes.models import Observation, ObservationRollup
from probes.realusers.otlp import JSON, serialize
from tests.realusers_otlp.conftest import JSON as JSON_TYPE
from tests.realusers_otlp.conftest import duration_points, genai_spans

CAP = 5


@pytest.mark.asgi_env(LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST=str(CAP))
def test_one_span_or_point_over_the_cap_is_413_and_the_cap_itself_is_taken(site, source, post):
    over = post(site, "traces", genai_spans(CAP + 1).SerializeToString(), token=source.token)
    assert over.status_code == 413
    assert f"more than {CAP} spans" in status_pb2.Status.FromString(over.content).message
    body = serialize(genai_spans(CAP + 1), JSON)
    assert json.loads(body)["resourceSpans"]
    assert post(site, "traces", body, token=source.token, content_type=JSON_TYPE).status_code == 413
    assert post(site, "metrics", duration_points(CAP + 1).SerializeToString(), token=source.token).status_code == 413
    assert Observation.objects.count() == 0
    assert ObservationRollup.objects.count() == 0

    assert post(site, "traces", genai_spans(CAP).SerializeToString(), token=source.token).status_code == 200
    assert post(site, "metrics", duration_points(CAP).SerializeToString(), token=source.token).status_code == 200
    assert Observation.objects.count() == CAP
    assert sum(r.samples for r in ObservationRollup.objects.all()) == 2 * CAP
