"""The rate-limited share (HTTP 429 and overloaded calls) over the window and per time bucket, with the least
headroom the provider reported in each bucket (None where no call reported it)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes import readings
from probes.readings.plan import bucket_start
from probes.readings.workloads import rate_bucket
from tests.workloads.conftest import failed


def test_each_bucket_counts_its_refused_calls_and_keeps_its_least_headroom(make_probe, make_region, add_calls, now):
    region = make_region()
    probe = make_probe(regions=[region])
    since, until = now - timedelta(hours=1), now
    size = timedelta(minutes=10)
    first = bucket_start(since, size) + size  # a whole bucket inside the window
    second = first + size
    add_calls(probe, region, first, [
        {"ratelimit_remaining_requests": 40, "ratelimit_remaining_tokens": 90_000},
        {"ratelimit_remaining_requests": 12, "ratelimit_remaining_tokens": 150_000},
        failed("rate_limited", ratelimit_remaining_requests=0, ratelimit_remaining_tokens=None),
        {"ratelimit_remaining_requests": None, "ratelimit_remaining_tokens": None},
    ])  # fmt: skip
    add_calls(probe, region, second, [
        {"ratelimit_remaining_requests": None, "ratelimit_remaining_tokens": None},
        {"outcome": "timeout", "ttft_ms": None},
    ])  # fmt: skip

    read = readings.workloads([probe.target_id], since, until, bucket=size)
    assert read.bucket == size
    (reading,) = read.regions
    assert (reading.calls, reading.rate_limited) == (6, 1)
    assert reading.rate_limited_ratio == pytest.approx(1 / 6)
    assert (reading.remaining_requests_min, reading.remaining_tokens_min) == (0, 90_000)
    a, b = reading.rate_limits
    assert (a.bucket_start, a.calls, a.rate_limited, a.rate_limited_ratio) == (first, 4, 1, 0.25)
    assert (a.remaining_requests_min, a.remaining_tokens_min) == (0, 90_000)
    # A timeout is a failure but not a refusal; no call of the bucket reported its headroom.
    assert (b.bucket_start, b.calls, b.rate_limited, b.rate_limited_ratio) == (second, 2, 0, 0.0)
    assert (b.remaining_requests_min, b.remaining_tokens_min) == (None, None)


@pytest.mark.parametrize(("window", "size"), [
    (timedelta(minutes=15), timedelta(minutes=1)),
    (timedelta(hours=1), timedelta(minutes=1)),
    (timedelta(hours=24), timedelta(minutes=24)),
    (timedelta(days=7), timedelta(hours=3)),
])  # fmt: skip
def test_a_window_is_cut_into_about_sixty_whole_buckets(now, window, size):
    assert rate_bucket(now - window, now) == size
