"""The ingest's budgets are shared by every process (counted in Postgres), per source, bucket and minute: a
request that does not fit is refused with the seconds left in the minute and takes nothing, so a smaller one may
still fit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.realusers.ratelimit import admit_otlp, take
from tests.factories import IngestSourceFactory

pytestmark = pytest.mark.django_db

T = datetime(2026, 11, 20, 12, 10, 45, tzinfo=UTC)


def test_requests_over_the_limit_get_the_seconds_left_in_the_minute():
    busy, quiet = IngestSourceFactory(), IngestSourceFactory()
    assert [take(busy.id, "b", 1, 3, T) for _ in range(3)] == [None, None, None]
    assert take(busy.id, "b", 1, 3, T) == 15
    assert take(busy.id, "b", 1, 3, T + timedelta(seconds=14, milliseconds=500)) == 1
    assert take(quiet.id, "b", 1, 3, T) is None  # another source has its own count
    assert take(busy.id, "other", 1, 3, T) is None  # and another bucket
    assert take(busy.id, "b", 1, 3, T + timedelta(seconds=15)) is None  # a new minute


def test_an_export_is_counted_in_spans_and_points_and_refused_whole(settings):
    settings.LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE = 100
    source = IngestSourceFactory()
    assert admit_otlp(source.id, 60, T) is None
    assert admit_otlp(source.id, 50, T) == 15  # would make 110: refused, and nothing taken
    assert admit_otlp(source.id, 40, T) is None  # exactly 100
    assert admit_otlp(source.id, 0, T) == 15  # an empty export still counts one
