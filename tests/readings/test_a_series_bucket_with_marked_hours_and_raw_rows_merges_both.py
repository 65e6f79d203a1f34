"""A time-series bucket holding marked hours and raw rows (the partial first
and last buckets, or one with an hour not rolled up yet) is merged from the
hours' rollups with its raw rows counted into the same histograms: its
figures are the nearest rank of the histogram of all its rows, for one
target and for every target alike. A bucket with no marked hour stays raw
and exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.histogram import exact_percentile, histogram_of
from probes.models import HourCut, Measurement, RollupHour
from probes.readings.cache import merge_cache
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements

BUCKET = timedelta(hours=3)  # the 7-day window's


def bucket_of(when: datetime) -> datetime:
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return epoch + ((when - epoch) // BUCKET) * BUCKET


@pytest.mark.parametrize("scope", ["one target", "every target"])
def test_a_bucket_of_marked_hours_and_raw_rows_ranks_all_of_them(make_probe, make_region, now, scope):
    regions = [make_region(slug="near", name="Near"), make_region(slug="far", name="Far")]
    probe = make_probe(regions=regions)
    current = floor_hour(now)
    start = current - 30 * HOUR
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, now, 30 * 48, seed=i, median=150.0 * (i + 1), fail_every=7)
    rebuild_range(start, current)
    # One hour in the middle is unmarked, as a late row leaves it: its
    # bucket is mixed. An earlier bucket's hours are as if never rolled up
    # (no mark, no cut to read them up to): it is raw alone.
    mixed = bucket_of(current - 13 * HOUR)
    raw_alone = bucket_of(current - 22 * HOUR)
    RollupHour.objects.filter(hour=mixed + HOUR).delete()
    RollupHour.objects.filter(hour__gte=raw_alone, hour__lt=raw_alone + BUCKET).delete()
    HourCut.objects.filter(hour__gte=raw_alone, hour__lt=raw_alone + BUCKET).delete()
    params = {"window": ["7d"]} | ({"target": [str(probe.target_id)]} if scope == "one target" else {})
    f = dashboard_filters(params, now)
    assert readings.bucket_size(f) == BUCKET
    merge_cache.clear()

    points = {(p["region"], p["bucket_start"]): p for p in readings.series(f)}
    for region in regions:
        for bucket in (mixed, raw_alone, bucket_of(now)):
            rows = Measurement.objects.filter(
                region=region, started_at__gte=max(bucket, f.since), started_at__lt=min(bucket + BUCKET, f.until)
            )
            values = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
            point = points[(region.slug, bucket)]
            assert point["samples"] == rows.count() > 0
            # The last bucket has none when the current hour is its first.
            marked = RollupHour.objects.filter(hour__gte=max(bucket, f.since), hour__lt=bucket + BUCKET).exists()
            assert marked == (bucket != raw_alone) or bucket == bucket_of(now)
            if not marked:
                assert point["p50"] == exact_percentile(values, 0.5)
                assert point["p95"] == exact_percentile(values, 0.95)
                continue
            # Every row of the bucket in one histogram, whichever way it was read.
            hist = histogram_of(values)
            assert point["p50"] == hist.percentile(0.5)
            assert point["p95"] == hist.percentile(0.95)
            assert point["value"] == hist.percentile(f.percentile)
            assert point["p50"] not in values  # a histogram bucket's value, not a sample
            assert bucket <= point["at"] <= min(bucket + BUCKET, now)
