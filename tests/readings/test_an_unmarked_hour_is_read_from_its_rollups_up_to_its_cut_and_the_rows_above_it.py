"""An hour without a mark (the current one, rebuilt every few minutes, or one a
late row reached) is read from the hourly rollups its last rebuild wrote,
which count its raw rows up to that rebuild's cut (HourCut), plus its raw
rows above the cut: the same figures as reading the hour raw, without
reading most of it. A window ending before the newest row the rollups count
reads the hour raw, as before."""

from __future__ import annotations

from datetime import timedelta

from latency.forms import dashboard_filters
from probes import readings
from probes.ingest import store
from probes.models import HourCut, HourlyRollup, Measurement, RollupHour
from probes.readings.cache import merge_cache
from probes.readings.plan import coverage
from probes.rollups import HOUR, floor_hour, rebuild_hour, rebuild_range
from tests.factories import spread_measurements
from tests.support import assert_point_picked_from, assert_rollups_read_as_raw, ingest_payload

METRICS = ("ttft", "connect")


def payload(probe, region, started, ttft):
    return ingest_payload(probe, region, started, ttft_ms=ttft, connect_ms=ttft / 10, total_ms=ttft + 99)


def fleet(make_probe, make_region):
    regions = [make_region(slug="near", name="Near"), make_region(slug="far", name="Far")]
    return make_probe(regions=regions), regions


def test_the_current_hour_is_its_rollups_plus_the_rows_stored_after_its_rebuild(make_probe, make_region, now):
    probe, regions = fleet(make_probe, make_region)
    current = floor_hour(now)
    start = current - 10 * HOUR
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, now - timedelta(minutes=10), 10 * 30, seed=i, fail_every=5)
    rebuild_range(start, now)
    assert not RollupHour.objects.filter(hour=current).exists()
    cut = HourCut.objects.get(hour=current)
    counted = Measurement.objects.filter(started_at__gte=current)
    assert cut.cut == max(counted.values_list("id", flat=True))
    assert cut.newest == max(counted.values_list("started_at", flat=True))
    assert sum(HourlyRollup.objects.filter(hour=current).values_list("samples", flat=True)) == counted.count()

    # Stored after the rebuild, through ingest: above the cut.
    stored = store(
        [payload(probe, region, now - timedelta(minutes=4 - i), 300.0 + 50 * i) for i, region in enumerate(regions)]
    )
    assert len(stored) == 2 and min(item["id"] for item in stored) > cut.cut

    since = now - 8 * HOUR
    plan = coverage(since, now)
    assert list(plan.partial) == [current]
    assert plan.tails == [(current, now, cut.cut)]
    # Nothing of the current hour is read raw but its tail.
    assert all(b <= current for _, b in plan.raw)

    ids = {"target_ids": [probe.target_id], "region_ids": [r.id for r in regions]}
    assert_rollups_read_as_raw(since, now, METRICS, group_by=("region_id",), **ids)
    assert_rollups_read_as_raw(since, now, METRICS, group_by=("region_id", "target_id"), **ids)
    # Every target by region: the marked hours from region blocks, the partial one from its hourly rollups.
    assert_rollups_read_as_raw(
        since, now, METRICS, group_by=("region_id",), every_target=True, every_region=True, **ids
    )


def test_an_hour_a_late_row_unmarked_is_its_rollups_plus_the_late_row(make_probe, make_region, now):
    probe, regions = fleet(make_probe, make_region)
    current = floor_hour(now)
    start = current - 10 * HOUR
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, current, 10 * 30, seed=i, fail_every=4)
    rebuild_range(start, current)
    late_hour = current - 5 * HOUR
    cut = HourCut.objects.get(hour=late_hour).cut

    assert len(store([payload(probe, regions[1], late_hour + timedelta(minutes=59), 4321.0)])) == 1
    assert not RollupHour.objects.filter(hour=late_hour).exists()

    since = current - 9 * HOUR - timedelta(minutes=20)
    plan = coverage(since, current)
    assert list(plan.partial) == [late_hour]
    assert plan.tails == [(late_hour, late_hour + HOUR, cut)]
    ids = {"target_ids": [probe.target_id], "region_ids": [r.id for r in regions]}
    assert_rollups_read_as_raw(since, current, METRICS, group_by=("region_id",), **ids)
    assert_rollups_read_as_raw(
        since, current, METRICS, group_by=("region_id",), every_target=True, every_region=True, **ids
    )


def test_a_window_ending_before_the_newest_row_the_rollups_count_reads_the_hour_raw(make_probe, make_region, now):
    probe, regions = fleet(make_probe, make_region)
    current = floor_hour(now)
    start = current - 10 * HOUR
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, now, 10 * 30, seed=i)
    rebuild_hour(current)
    newest = HourCut.objects.get(hour=current).newest
    assert current < newest < now

    plan = coverage(start, newest)
    assert not plan.partial and not plan.tails
    assert plan.raw[-1][1] == newest
    assert_rollups_read_as_raw(start, newest, METRICS, group_by=("region_id",), target_ids=[probe.target_id])


def test_the_last_bucket_of_a_series_counts_the_current_hours_rollups_and_tail(make_probe, make_region, now):
    probe, regions = fleet(make_probe, make_region)
    current = floor_hour(now)
    start = current - 30 * HOUR
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, now - timedelta(minutes=5), 30 * 24, seed=i, median=200.0 * (i + 1))
    rebuild_range(start, now)
    store([payload(probe, region, now - timedelta(minutes=2), 999.0) for region in regions])

    for params in ({"window": ["24h"]}, {"window": ["24h"], "target": [str(probe.target_id)]}):
        f = dashboard_filters(params, now)
        merge_cache.clear()
        points = {(p["region"], p["bucket_start"]): p for p in readings.series(f)}
        for region in regions:
            rows = Measurement.objects.filter(region=region, started_at__gte=current, started_at__lt=f.until)
            values = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
            point = points[(region.slug, current)]
            assert point["samples"] == rows.count() > 1
            assert_point_picked_from(point, values, f.percentile)
            assert 999.0 in values
