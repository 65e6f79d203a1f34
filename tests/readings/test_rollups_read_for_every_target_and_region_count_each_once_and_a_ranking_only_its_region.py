"""A reading of every target and every region reads its rollups with no condition on target or region (each
rollup row's target and region is one of them), so the hour index serves it; a reading narrowed to one region
by its caller (a region's ranking, whatever the selection names) still reads that region's rows alone. Over
seven days, from series blocks, hourly rollups and raw edges, every figure matches the raw rows."""

from __future__ import annotations

from datetime import timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.histogram import exact_percentile
from probes.models import Measurement
from probes.readings.plan import complete_days, coverage
from probes.rollups import floor_hour, rebuild_range
from tests.factories import spread_measurements

# Nearest rank from a 2% bucket's geometric midpoint (probes.readings).
BUCKET = 0.01


@pytest.fixture
def regions(make_region):
    return [make_region(slug="lagos", name="Lagos"), make_region(slug="oslo", name="Oslo")]


@pytest.fixture
def probes(make_probe, make_target, regions):
    return [make_probe(target=make_target(name=name), regions=regions) for name in ("fast", "slow")]


def exact(rows, region, target_id) -> list[float]:
    values = rows.filter(region=region, target_id=target_id).values_list("ttft_ms", flat=True)
    return [v for v in values if v is not None]


def test_every_pair_of_the_table_and_a_regions_ranking_match_their_raw_rows(probes, regions, now):
    since = now - timedelta(days=7)
    for p, probe in enumerate(probes):
        for r, region in enumerate(regions):
            # Each pair its own median, so a row read for the wrong pair moves a figure.
            median = 150.0 * (1 + p) * (1 + 3 * r)
            spread_measurements(probe, region, since, now, 300, seed=10 * p + r, median=median, fail_every=11)
    rebuild_range(floor_hour(since), floor_hour(now))
    f = dashboard_filters({"window": ["7d"]}, now)
    days, hours = complete_days(coverage(f.since, f.until).hours)
    assert days and hours  # complete days and hours beside them, not raw rows alone
    rows = Measurement.objects.filter(started_at__gte=f.since, started_at__lt=f.until)

    table = readings.table(f)
    assert {(row["region_slug"], row["target_id"]) for row in table} == {
        (region.slug, probe.target_id) for region in regions for probe in probes
    }
    for row in table:
        region = next(r for r in regions if r.slug == row["region_slug"])
        values = exact(rows, region, row["target_id"])
        assert row["samples"] == rows.filter(region=region, target_id=row["target_id"]).count()
        assert row["p50"] == pytest.approx(exact_percentile(values, 0.5), rel=BUCKET)
        assert row["p95"] == pytest.approx(exact_percentile(values, 0.95), rel=BUCKET)

    # No region selected: the ranking of Oslo reads Oslo's rows, not every region's.
    ranking = readings.ranking("oslo", f)
    assert [row["target_id"] for row in ranking] == [probe.target_id for probe in probes]
    for row in ranking:
        values = exact(rows, regions[1], row["target_id"])
        assert row["samples"] == rows.filter(region=regions[1], target_id=row["target_id"]).count()
        assert row["p50"] == pytest.approx(exact_percentile(values, 0.5), rel=BUCKET)

    # The map, grouped by region, adds every target's rows of each region once.
    summary = {row["slug"]: row for row in readings.summary(f)}
    for region in regions:
        values = [v for v in rows.filter(region=region).values_list("ttft_ms", flat=True) if v is not None]
        assert summary[region.slug]["samples"] == rows.filter(region=region).count()
        assert summary[region.slug]["p50"] == pytest.approx(exact_percentile(values, 0.5), rel=BUCKET)
