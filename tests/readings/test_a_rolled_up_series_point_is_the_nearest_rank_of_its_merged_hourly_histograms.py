"""A rolled-up time-series point's p50, p95 and chosen percentile are the
nearest rank of the merge of its bucket's hourly histograms, to the very
bucket: picked in SQL over rows whose keys repeat from hour to hour and
region to region, they equal probes.histogram's percentile of the merge in
Python, for one target (hourly rollups) and for every target (region
rollup blocks)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.histogram import Histogram
from probes.metrics import PERCENTILES
from probes.models import HourlyRollup
from probes.readings.cache import merge_cache
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import ProbeFactory, RegionFactory, spread_measurements
from tests.support import shared_rows

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def probes(django_db_setup, django_db_blocker):
    """Two probes in two regions with a week of rows, rolled up: written once for the module, whose tests only
    read them."""
    with shared_rows(django_db_blocker):
        now = datetime.now(UTC)
        regions = [RegionFactory(), RegionFactory()]
        first = ProbeFactory(regions=regions)
        probes = [first, ProbeFactory(regions=regions)]
        since = floor_hour(now) - timedelta(days=7)
        for i, probe in enumerate(probes):
            for j, region in enumerate(probe.regions.all()):
                # Medians apart, so a bucket's merge is not one bump: its ranks fall in different hours' keys.
                spread_measurements(probe, region, since, now, 700, seed=10 * i + j, median=150.0 * (1 + i + j))
        rebuild_range(since, floor_hour(now))
        yield probes


def merged_hours(start, size, *, region_slug: str, target_id: int | None) -> Histogram:
    rows = HourlyRollup.objects.filter(hour__gte=start, hour__lt=start + size, region__slug=region_slug)
    if target_id is not None:
        rows = rows.filter(target_id=target_id)
    return Histogram.merged(Histogram.from_sparse(r.ttft_hist) for r in rows)


@pytest.mark.parametrize("percentile", sorted(PERCENTILES))
@pytest.mark.parametrize("every_target", [False, True])
def test_each_rolled_up_point_is_the_nearest_rank_of_its_merged_hours(probes, now, percentile, every_target):
    params = {"window": ["7d"], "percentile": [percentile]}
    if not every_target:
        params["target"] = [str(probes[0].target_id)]
    f = dashboard_filters(params, now)
    size = readings.bucket_size(f)
    merge_cache.clear()

    checked = 0
    for point in readings.series(f):
        start = point["bucket_start"]
        if start < f.since or start + size > floor_hour(now):
            continue  # partial or not rolled up: read from raw rows
        hist = merged_hours(
            start, size, region_slug=point["region"], target_id=None if every_target else probes[0].target_id
        )
        assert point["samples"] == sum(
            HourlyRollup.objects.filter(hour__gte=start, hour__lt=start + size, region__slug=point["region"])
            .filter(**({} if every_target else {"target_id": probes[0].target_id}))
            .values_list("samples", flat=True)
        )
        assert (point["p50"], point["p95"], point["value"]) == (
            hist.percentile(0.5),
            hist.percentile(0.95),
            hist.percentile(PERCENTILES[percentile]),
        ), (start, point["region"])
        checked += 1
    assert checked >= 20
    assert size >= 3 * HOUR
