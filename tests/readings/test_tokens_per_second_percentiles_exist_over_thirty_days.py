"""Tokens per second over thirty days, read from rollups of complete days and hours,
has the same figures as any latency: p50, p95 and the chosen percentile on
the map, the table, the ranking, the distribution and the time series, each
within one histogram bucket of the exact value of the raw rows."""

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
def probe(make_probe, make_region):
    return make_probe(regions=[make_region(slug="lagos", name="Lagos")])


def test_tokens_per_second_percentiles_exist_over_thirty_days(probe, now):
    region = probe.regions.get()
    since = now - timedelta(days=30)
    spread_measurements(probe, region, since, now, 720, seed=3, fail_every=9)
    rebuild_range(floor_hour(since), floor_hour(now))
    f = dashboard_filters(
        {"target": [str(probe.target_id)], "window": ["30d"], "metric": ["tokens_per_s"], "percentile": ["p90"]}, now
    )
    assert complete_days(coverage(f.since, f.until).hours)[0]  # complete days read from rollups, not raw rows
    rows = Measurement.objects.filter(region=region, started_at__gte=f.since, started_at__lt=f.until)
    exact = [v for v in rows.values_list("tokens_per_s", flat=True) if v is not None]

    def assert_figures(row):
        assert row["p50"] == pytest.approx(exact_percentile(exact, 0.5), rel=BUCKET)
        assert row["p95"] == pytest.approx(exact_percentile(exact, 0.95), rel=BUCKET)
        assert row["value"] == pytest.approx(exact_percentile(exact, 0.9), rel=BUCKET)
        assert "value_kind" not in row

    (summary,) = readings.summary(f)
    assert_figures(summary)
    (table,) = readings.table(f)
    assert_figures(table)
    (ranked,) = readings.ranking("lagos", f)
    assert_figures(ranked)

    hists, (distribution,) = readings.distribution_rows(f)
    assert hists["lagos"].count == distribution["samples"] == len(exact)
    assert distribution["p50"] == pytest.approx(exact_percentile(exact, 0.5), rel=BUCKET)

    series = readings.series(f)
    assert len(series) >= 60  # 12-hour buckets over 30 days
    size = readings.bucket_size(f)
    for point in series:
        start = point["bucket_start"]
        measured = rows.filter(started_at__gte=start, started_at__lt=start + size, tokens_per_s__isnull=False)
        if not measured.exists():
            # Only failed attempts in the bucket (it happens to the last one,
            # an hour or two long, when the run starts just after midnight):
            # no rate to rank, so no figure, and never a zero.
            assert point["p50"] is point["p95"] is point["value"] is None
            continue
        assert point["p50"] is not None and point["p95"] is not None and point["value"] is not None
        assert point["p50"] <= point["value"] <= point["p95"]
        assert "mean" not in point
