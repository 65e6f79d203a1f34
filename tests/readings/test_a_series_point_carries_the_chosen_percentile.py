"""Each time-series point carries `value`, the selection's percentile of its
bucket (besides p50 and p95): exact on raw buckets, within one histogram
bucket on rolled-up ones."""

from __future__ import annotations

from datetime import timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.histogram import exact_percentile
from probes.models import Measurement
from probes.rollups import floor_hour, rebuild_range
from tests.factories import spread_measurements


@pytest.fixture
def probe(make_probe, make_region):
    return make_probe(regions=[make_region(slug="lagos", name="Lagos")])


def bucket_values(point, size, column):
    rows = Measurement.objects.filter(
        started_at__gte=point["bucket_start"], started_at__lt=point["bucket_start"] + size
    ).values_list(column, flat=True)
    return [v for v in rows if v is not None]


@pytest.mark.parametrize(("window", "rel"), [("1h", 0), ("7d", 0.01)])
def test_a_series_point_carries_the_chosen_percentile(probe, now, window, rel):
    region = probe.regions.get()
    params = {"target": [str(probe.target_id)], "window": [window], "percentile": ["p90"]}
    f = dashboard_filters(params, now)
    spread_measurements(probe, region, f.since, now, 2000, seed=5, fail_every=8)
    rebuild_range(floor_hour(f.since), floor_hour(now))
    size = readings.bucket_size(f)

    points = readings.series(f)
    assert points
    checked = 0
    for point in points:
        values = bucket_values(point, size, "ttft_ms")
        if point["bucket_start"] < f.since or point["bucket_start"] + size > now or not values:
            continue  # partial buckets hold only the window's share
        assert point["value"] == pytest.approx(exact_percentile(values, 0.9), rel=rel)
        # Ordered; on rolled-up buckets p90 and p95 may read the same histogram bucket.
        assert point["p50"] <= point["value"] <= point["p95"]
        checked += 1
    assert checked >= 2


def test_a_bucket_without_values_of_the_metric_has_no_percentile(probe, now):
    region = probe.regions.get()
    f = dashboard_filters({"target": [str(probe.target_id)], "window": ["1h"], "percentile": ["p90"]}, now)
    spread_measurements(probe, region, now - timedelta(minutes=30), now - timedelta(minutes=29), 3, seed=1,
                        fail_every=1)  # fmt: skip
    (point,) = readings.series(f)
    assert point["samples"] == 3
    assert point["p50"] is point["p95"] is point["value"] is None
