"""OTLP is counted in spans plus metric points per source and minute (LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE),
not in requests: an export that would go over is answered 429 with Retry-After (OTLP/HTTP's throttling answer),
stored not at all and counted not at all, so a smaller one that still fits is taken."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.rpc import status_pb2

from probes.models import Observation, ObservationRollup
from tests.factories import IngestSourceFactory
from tests.realusers_otlp.conftest import duration_points, genai_spans


def _minute() -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0)


@pytest.mark.asgi_env(LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE="10", LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST="10")
def test_spans_and_points_share_the_minute_and_the_export_over_it_is_refused_whole(site, post):
    # A minute that turns during the exports gives a new budget: then they are sent again for a new source.
    for _ in range(2):
        Observation.objects.all().delete()
        ObservationRollup.objects.all().delete()
        source = IngestSourceFactory()
        began = _minute()
        answers = [
            post(site, "traces", genai_spans(6).SerializeToString(), token=source.token),
            post(site, "metrics", duration_points(6).SerializeToString(), token=source.token),  # 12: over
            post(site, "metrics", duration_points(4).SerializeToString(), token=source.token),  # 10: fits
            post(site, "traces", genai_spans(1).SerializeToString(), token=source.token),  # 11: over
        ]
        if _minute() == began:
            break
    assert [a.status_code for a in answers] == [200, 429, 200, 429]
    for refused in (answers[1], answers[3]):
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert "spans and points per minute" in status_pb2.Status.FromString(refused.content).message
    assert Observation.objects.filter(source=source).count() == 6
    assert sum(r.samples for r in ObservationRollup.objects.filter(model__startswith="model-")) == 4
