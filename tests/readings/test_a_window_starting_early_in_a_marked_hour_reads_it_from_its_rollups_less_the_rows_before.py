"""A window that starts before the middle of a marked hour reads that hour whole
from its hourly rollups and takes away its raw rows before the window, which
are fewer than the ones inside it: counts subtract exactly, so the figures
are those of the raw rows, and the window's first hour costs at most half
an hour of raw rows; the time series' first bucket likewise. Only while every raw row of the hour is still stored:
beyond the retention, without the day's own partition, the hour's part in
the window is read raw as before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings

from probes import readings
from probes.histogram import Histogram
from probes.models import Measurement, RollupHour
from probes.partitions import MEASUREMENTS, days_between, ensure_days
from probes.readings.cache import merge_cache
from probes.readings.plan import coverage
from probes.readings.selection import Selection
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements
from tests.support import assert_point_picked_from, assert_rollups_read_as_raw

METRICS = ("ttft", "connect")


def filled(make_probe, make_region, start, end):
    regions = [make_region(slug="near", name="Near"), make_region(slug="far", name="Far")]
    probe = make_probe(regions=regions)
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, end, 12 * 40, seed=i, fail_every=6)
    rebuild_range(start, end)
    return probe, regions


def test_the_first_hour_is_its_rollups_less_its_rows_before_the_window(make_probe, make_region, now):
    current = floor_hour(now)
    start = current - 12 * HOUR
    probe, regions = filled(make_probe, make_region, start, current)
    first = current - 9 * HOUR
    assert RollupHour.objects.filter(hour=first).exists()
    since = first + timedelta(minutes=19, seconds=7)

    plan = coverage(since, current, head=True)
    assert plan.head == (first, RollupHour.objects.get(hour=first).built_at)
    assert plan.minus == [(first, since)]
    assert plan.raw == []
    ids = {"target_ids": [probe.target_id], "region_ids": [r.id for r in regions]}
    assert_rollups_read_as_raw(since, current, METRICS, group_by=("region_id",), **ids)
    assert_rollups_read_as_raw(since, current, METRICS, group_by=("region_id", "target_id"), **ids)
    assert_rollups_read_as_raw(
        since, current, METRICS, group_by=("region_id",), every_target=True, every_region=True, **ids
    )

    # Past the middle of the hour the rows inside the window are the fewer: read raw.
    late = first + timedelta(minutes=40)
    plan = coverage(late, current, head=True)
    assert plan.head is None and plan.raw == [(late, first + HOUR)]
    assert_rollups_read_as_raw(late, current, METRICS, group_by=("region_id",), **ids)


def test_a_first_hour_whose_raw_rows_may_be_pruned_is_read_raw(make_probe, make_region, now):
    current = floor_hour(now)
    start = current - 3 * 24 * HOUR
    probe, _ = filled(make_probe, make_region, start, start + 12 * HOUR)
    first = start + 2 * HOUR
    since = first + timedelta(minutes=15)
    with override_settings(LATENCY_RETENTION_DAYS=1):
        # Beyond the retention, in the default partition: its rows may be gone.
        plan = coverage(since, current, head=True)
        assert plan.head is None and plan.raw[0] == (since, first + HOUR)
        # The day's own partition is dropped only whole: its rows are all there while it is.
        ensure_days(MEASUREMENTS, days_between(first - HOUR, first + 2 * HOUR))
        plan = coverage(since, current, head=True)
        assert plan.head is not None and plan.minus == [(first, since)]
        assert_rollups_read_as_raw(since, current, METRICS, group_by=("region_id",), target_ids=[probe.target_id])


def test_subtracting_counts_a_histogram_does_not_hold_changes_nothing():
    whole = Histogram({3: 2, 5: 1})
    with pytest.raises(ValueError, match="does not hold"):
        whole.subtract(Histogram({3: 3}))
    assert whole == Histogram({3: 2, 5: 1}) and whole.count == 3
    whole.subtract(Histogram({3: 2}))
    assert whole == Histogram({5: 1}) and whole.count == 1


@pytest.mark.parametrize("every", [False, True], ids=["one target", "every target"])
def test_a_series_first_bucket_is_its_hour_less_the_rows_before_the_window(make_probe, make_region, now, every):
    current = floor_hour(now)
    start = current - 30 * HOUR
    probe, regions = filled(make_probe, make_region, start, current)
    first = current - 24 * HOUR
    since = first + timedelta(minutes=12, seconds=30)
    f = Selection(since=since, until=current, window="24h", target_ids=[] if every else [probe.target_id])
    assert coverage(f.since, f.until, head=True).minus == [(first, since)]
    merge_cache.clear()

    points = {(p["region"], p["bucket_start"]): p for p in readings.series(f)}
    for region in regions:
        rows = Measurement.objects.filter(region=region, started_at__gte=since, started_at__lt=first + HOUR)
        values = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
        point = points[(region.slug, first)]
        assert point["samples"] == rows.count() > 0
        assert_point_picked_from(point, values, f.percentile)
        assert since <= point["at"] < first + HOUR
