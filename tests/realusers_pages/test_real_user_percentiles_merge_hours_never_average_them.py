"""Two hours of different distributions read as one: the percentile of all their calls, from the merged
histograms, not the mean of each hour's percentile."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes import readings
from probes.histogram import exact_percentile
from tests.factories import IngestSourceFactory, TargetFactory
from tests.realusers_pages.support import LAGOS, calls

pytestmark = pytest.mark.django_db

T = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_two_hours_merge_into_the_percentile_of_all_their_calls():
    target = TargetFactory(url="https://api.example.com/v1/chat/completions", model="gpt-4o")
    source = IngestSourceFactory()
    fast = [100.0] * 9
    slow = [5000.0]
    calls(source.id, 9, T, LAGOS, ttft_ms=fast)
    calls(source.id, 1, T + timedelta(hours=1), LAGOS, ttft_ms=slow)
    calls(source.id, 9, T + timedelta(hours=1, minutes=10), LAGOS, ttft_ms=[3000.0] * 9)

    read = readings.real_users.rows(T, T + timedelta(hours=2))
    [row] = read.rows
    assert row.target_id == target.id and row.target == target.name and row.samples == 19
    everything = fast + slow + [3000.0] * 9
    # The merged median is a 100 ms call or a 3 s one, never the ~1.5 s mean of two hourly medians.
    assert row.figures["ttft_p50"] == pytest.approx(exact_percentile(everything, 0.5), rel=0.01)
    assert row.figures["ttft_p95"] == pytest.approx(exact_percentile(everything, 0.95), rel=0.01)
    assert row.figures["total_p50"] == pytest.approx(2000.0, rel=0.01)


def test_hourly_buckets_keep_each_hour_and_the_window_counts_whole_hours():
    TargetFactory(url="https://api.example.com/v1/chat/completions", model="gpt-4o")
    source = IngestSourceFactory()
    calls(source.id, 5, T + timedelta(minutes=1), LAGOS, ttft_ms=100.0)
    calls(source.id, 5, T + timedelta(hours=1, minutes=1), LAGOS, ttft_ms=400.0)

    hourly = readings.real_users.rows(T, T + timedelta(hours=2), bucket=timedelta(hours=1)).rows
    assert [(r.bucket, round(r.figures["ttft_p50"], -1)) for r in hourly] == [
        (T, 100.0),
        (T + timedelta(hours=1), 400.0),
    ]
    # A window starting mid-hour still holds that hour whole: real users have hour resolution.
    assert readings.real_users.rows(T + timedelta(minutes=30), T + timedelta(hours=1)).rows[0].samples == 5
    # ... and a window ending at an hour's start does not reach into it.
    assert readings.real_users.rows(T, T + timedelta(hours=1)).rows[0].samples == 5


def test_a_target_filter_leaves_other_targets_and_providers_out(settings):
    settings.LATENCY_REAL_USERS_MIN_SAMPLES = 1
    one = TargetFactory(url="https://api.example.com/v1/chat/completions", model="gpt-4o")
    TargetFactory(url="https://other.example.com/v1/chat/completions", model="m2")
    source = IngestSourceFactory()
    calls(source.id, 1, T, LAGOS)
    calls(source.id, 1, T, LAGOS, host="other.example.com", model="m2")
    calls(source.id, 1, T, LAGOS, host="llm.internal", model="x")
    window = (T, T + timedelta(hours=1))
    assert len(readings.real_users.rows(*window).rows) == 3
    assert [r.target_id for r in readings.real_users.rows(*window, target_ids=[one.id]).rows] == [one.id]
    [place] = readings.real_users.rows(*window, by_target=False).rows
    assert place.samples == 3
