"""The store keeps each span or beacon as a raw row and adds it to the hourly rollup of its place and target;
metric histograms add their calls to the same rollups; two stores into the same hour add up, and a call with
no time to first token leaves TTFT out instead of counting a zero."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.histogram import Histogram
from probes.models import Observation, ObservationRollup
from probes.realusers import matching
from probes.realusers.store import record
from probes.realusers.types import Observed, ObservedHistogram, Place
from tests.factories import IngestSourceFactory, TargetFactory

pytestmark = pytest.mark.django_db

T = datetime(2026, 11, 20, 12, 10, tzinfo=UTC)
LAGOS = Place("NG", "Lagos", 6.45, 3.4, "attributes")


@pytest.fixture(autouse=True)
def _fresh_targets():
    matching.forget()
    yield
    matching.forget()


def test_spans_and_histograms_of_one_hour_and_place_add_up_in_one_rollup():
    target = TargetFactory(url="https://api.example.com/v1/chat/completions", model="gpt-4o", api_style="openai")
    source = IngestSourceFactory()
    calls = [
        Observed("span", T + timedelta(minutes=i), LAGOS, host="api.example.com", model="gpt-4o-2024-08-06",
                 ttft_ms=100.0 * (i + 1), total_ms=1000.0 + i)
        for i in range(3)
    ]  # fmt: skip
    calls.append(Observed("span", T, LAGOS, host="api.example.com", model="gpt-4o", total_ms=900.0, error_type="500"))
    stored = record(source.id, calls)
    assert (stored.observations, stored.matched) == (4, 4)
    histogram = ObservedHistogram("total", T, LAGOS, host="api.example.com", model="gpt-4o", counts=[(1500.0, 6)])
    record(source.id, histograms=[histogram])

    rollups = list(ObservationRollup.objects.all())
    # Two models (a dated one and the plain one) of one target: two rows, both the target's.
    assert {(r.model, r.target_id) for r in rollups} == {("gpt-4o-2024-08-06", target.id), ("gpt-4o", target.id)}
    plain = next(r for r in rollups if r.model == "gpt-4o")
    assert (plain.samples, plain.errors) == (7, 1)
    assert Histogram.from_sparse(plain.total_hist).count == 7
    assert Histogram.from_sparse(plain.ttft_hist).count == 0  # neither the errored span nor the histogram had one
    dated = next(r for r in rollups if r.model != "gpt-4o")
    assert Histogram.from_sparse(dated.ttft_hist).percentile(0.5) == pytest.approx(200, rel=0.02)
    assert Observation.objects.filter(ttft_ms__isnull=True).count() == 1


def test_an_unknown_host_is_kept_under_its_own_name_and_separate_hours_stay_apart():
    source = IngestSourceFactory()
    record(source.id, [Observed("span", T, LAGOS, host="llm.internal", model="m", total_ms=5.0)])
    record(source.id, [Observed("span", T + timedelta(hours=1), LAGOS, host="llm.internal", model="m", total_ms=5.0)])
    record(source.id, [Observed("span", T, LAGOS, host="llm.internal", model="m", total_ms=7.0)])
    rows = sorted(ObservationRollup.objects.values_list("hour", "target_id", "host", "samples"))
    assert rows == [
        (T.replace(minute=0), None, "llm.internal", 2),
        (T.replace(minute=0) + timedelta(hours=1), None, "llm.internal", 1),
    ]


def test_a_call_without_a_host_matches_the_one_target_of_its_model_and_provider():
    openai = TargetFactory(model="gpt-4o-mini", api_style="openai")
    TargetFactory(model="claude-x", api_style="anthropic")
    TargetFactory(model="shared", api_style="openai")
    TargetFactory(model="shared", api_style="anthropic")
    source = IngestSourceFactory()
    calls = [
        Observed("span", T, provider="openai", model="gpt-4o-mini", total_ms=1.0),
        Observed("span", T, provider="anthropic", model="gpt-4o-mini", total_ms=1.0),  # wrong style: no match
        Observed("span", T, model="shared", total_ms=1.0),  # two targets: ambiguous
    ]
    record(source.id, calls)
    assert list(Observation.objects.order_by("id").values_list("target_id", flat=True)) == [openai.id, None, None]
