"""Retention: real users' raw observations go with LATENCY_RETENTION_DAYS, their rollups with
LATENCY_ROLLUP_RETENTION_DAYS when set (kept otherwise, like the probes' rollups); rate-limit counters go
after an hour, span resources after two days, metric streams after a week without an update."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import IngestRate, MetricStream, Observation, ObservationRollup, SpanResource
from probes.rollups.prune import prune_raw
from tests.factories import IngestSourceFactory
from tests.realusers_pages.support import LAGOS, calls

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)


@pytest.fixture
def source():
    return IngestSourceFactory()


def test_observations_follow_the_raw_retention_and_rollups_stay_unless_told(settings, source):
    settings.LATENCY_RETENTION_DAYS = 30
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 0
    calls(source.id, 2, NOW - timedelta(days=31), LAGOS, host="h", model="old")
    calls(source.id, 3, NOW - timedelta(days=29), LAGOS, host="h", model="recent")

    prune_raw(now=NOW)

    assert sorted(Observation.objects.values_list("model", flat=True)) == ["recent"] * 3
    # The old hour's rollup still holds its calls: pages over a long window keep them.
    assert sorted(ObservationRollup.objects.values_list("model", "samples")) == [("old", 2), ("recent", 3)]


def test_rollups_go_after_the_rollup_retention_when_it_is_set(settings, source):
    settings.LATENCY_RETENTION_DAYS = 7
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 90
    calls(source.id, 1, NOW - timedelta(days=91), LAGOS, host="h", model="ancient")
    calls(source.id, 1, NOW - timedelta(days=60), LAGOS, host="h", model="kept")

    prune_raw(now=NOW)

    assert list(ObservationRollup.objects.values_list("model", flat=True)) == ["kept"]
    assert not Observation.objects.exists()


def test_the_ingests_bookkeeping_goes_once_stale(source):
    IngestRate.objects.create(source=source, minute=NOW - timedelta(minutes=61), count=3)
    IngestRate.objects.create(source=source, minute=NOW - timedelta(minutes=5), count=1)
    SpanResource.objects.create(source=source, key="gone", last_span_at=NOW - timedelta(days=3))
    SpanResource.objects.create(source=source, key="recent", last_span_at=NOW - timedelta(hours=20))
    for key in ("silent", "busy"):
        MetricStream.objects.create(source=source, key=key, start_time_ns=1, last_time_ns=2, count=1)
    # updated_at is written by save(): set it as the passing of time would have.
    MetricStream.objects.filter(key="silent").update(updated_at=NOW - timedelta(days=8))
    MetricStream.objects.filter(key="busy").update(updated_at=NOW - timedelta(days=6))

    prune_raw(now=NOW)

    assert list(IngestRate.objects.values_list("count", flat=True)) == [1]
    assert list(SpanResource.objects.values_list("key", flat=True)) == ["recent"]
    assert list(MetricStream.objects.values_list("key", flat=True)) == ["busy"]
