"""The per-source rate limit is shared by every process (counted in Postgres), per source, and per minute."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.realusers.ratelimit import admit
from tests.factories import IngestSourceFactory

pytestmark = pytest.mark.django_db

T = datetime(2026, 11, 20, 12, 10, 45, tzinfo=UTC)


def test_requests_over_the_limit_get_the_seconds_left_in_the_minute(settings):
    settings.LATENCY_INGEST_RATE_PER_MINUTE = 3
    busy, quiet = IngestSourceFactory(), IngestSourceFactory()
    assert [admit(busy.id, T) for _ in range(3)] == [None, None, None]
    assert admit(busy.id, T) == 15
    assert admit(busy.id, T + timedelta(seconds=14, milliseconds=500)) == 1
    assert admit(quiet.id, T) is None  # another source has its own count
    assert admit(busy.id, T + timedelta(seconds=15)) is None  # a new minute
