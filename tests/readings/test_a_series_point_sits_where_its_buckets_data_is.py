"""A time-series point carries `at`, where its bucket's data is: the mean
time of the bucket's measurements, inside the part of the bucket the window
covers. Over 30 days the buckets are 12 hours long, and data that starts in
a bucket's last hours must not be drawn at the bucket's start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.models import Measurement
from probes.readings.plan import bucket_start
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements


@pytest.fixture
def probe(make_probe, make_region):
    return make_probe(regions=[make_region(slug="lagos", name="Lagos")])


def mean_time(rows) -> datetime:
    times = [t.timestamp() for t in rows.values_list("started_at", flat=True)]
    return datetime.fromtimestamp(sum(times) / len(times), UTC)


def test_a_series_point_from_rollups_sits_where_its_buckets_data_is(probe, now):
    region = probe.regions.get()
    f = dashboard_filters({"target": [str(probe.target_id)], "window": ["30d"]}, now)
    assert readings.bucket_size(f) == timedelta(hours=12)
    # A whole bucket ten days back, with data only in its last two hours.
    bucket = bucket_start(now - timedelta(days=10), 12 * HOUR)
    spread_measurements(probe, region, bucket + 10 * HOUR, bucket + 12 * HOUR, 40, seed=1)
    # And the window's first bucket, which starts before the window does.
    spread_measurements(probe, region, f.since, f.since + 2 * HOUR, 20, seed=2)
    rebuild_range(floor_hour(f.since), floor_hour(now))

    points = {point["bucket_start"]: point for point in readings.series(f)}
    late = points[bucket]
    assert late["samples"] == 40
    # The hours' midpoints weighted by samples: 10:30 and 11:30, 20 each.
    assert late["at"] == bucket + 11 * HOUR
    first = points[min(points)]
    assert first["bucket_start"] < f.since <= first["at"] < f.since + 2 * HOUR


def test_a_series_point_from_raw_rows_sits_at_the_mean_time_of_its_measurements(probe, now):
    region = probe.regions.get()
    f = dashboard_filters({"target": [str(probe.target_id)], "window": ["24h"]}, now)
    size = readings.bucket_size(f)
    assert size == HOUR
    # Uneven within their buckets: all in each bucket's last quarter.
    for k in range(1, 6):
        begin = floor_hour(now) - k * HOUR + size * 3 / 4
        spread_measurements(probe, region, begin, begin + size / 4, 5, seed=k)

    points = readings.series(f)
    assert len(points) == 5
    for point in points:
        rows = Measurement.objects.filter(
            region=region, started_at__gte=point["bucket_start"], started_at__lt=point["bucket_start"] + size
        )
        assert point["samples"] == rows.count() == 5
        assert abs(point["at"] - mean_time(rows)) < timedelta(milliseconds=1)
        assert point["at"] > point["bucket_start"] + size * 3 / 4
