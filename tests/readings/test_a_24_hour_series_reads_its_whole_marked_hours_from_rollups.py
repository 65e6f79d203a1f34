"""The 24 h time series has hour-long buckets, so its whole marked hours are
merged from hourly rollups (30-minute buckets could only be read from raw
rows, the whole day of them); the partial hours at the window's ends, and an
hour not rolled up yet, stay raw and exact."""

from __future__ import annotations

from datetime import UTC, datetime

from latency.forms import dashboard_filters
from probes import readings
from probes.histogram import exact_percentile
from probes.models import Measurement
from probes.readings.cache import merge_cache
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements


def bucket_of(when: datetime) -> datetime:
    return floor_hour(when.astimezone(UTC))


def test_a_24_hour_series_reads_its_whole_marked_hours_from_rollups(make_probe, make_region, now):
    regions = [make_region(slug="near", name="Near"), make_region(slug="far", name="Far")]
    probe = make_probe(regions=regions)
    current = floor_hour(now)
    for k in range(25):
        hour = current - 24 * HOUR + k * HOUR
        for i, region in enumerate(regions):
            spread_measurements(
                probe, region, hour, min(hour + HOUR, now), 12, seed=k * 10 + i, median=150.0 * (i + 1), fail_every=6
            )
    # The hour before the current one is not rolled up yet: it stays raw.
    rebuild_range(current - 24 * HOUR, current - HOUR)
    f = dashboard_filters({"target": [str(probe.target_id)], "window": ["24h"]}, now)
    assert readings.bucket_size(f) == HOUR
    rolled_up = {current - HOUR * k for k in range(23, 1, -1)}  # wholly inside the window and marked
    raw_buckets = {floor_hour(f.since), current - HOUR, current}

    series = readings.series(f)
    got = {(row["region"], row["bucket_start"]): row for row in series}
    expected: dict[tuple[str, datetime], list[float | None]] = {}
    for region in regions:
        rows = Measurement.objects.filter(region=region, started_at__gte=f.since, started_at__lt=f.until)
        for started, ttft in rows.values_list("started_at", "ttft_ms"):
            expected.setdefault((region.slug, bucket_of(started)), []).append(ttft)
    assert set(got) == set(expected)
    assert {start for _, start in got} == rolled_up | raw_buckets
    for (slug, start), values in expected.items():
        row = got[(slug, start)]
        present = [v for v in values if v is not None]
        assert row["samples"] == len(values)
        exact = exact_percentile(present, 0.5), exact_percentile(present, 0.95)
        if start in rolled_up:  # the merged histogram's bucket, within its 2%
            assert all(abs(g - e) <= 0.02 * e for g, e in zip((row["p50"], row["p95"]), exact, strict=True))
        else:
            assert (row["p50"], row["p95"]) == exact

    # Without the rolled-up hours' raw rows (and without the merge cache) the
    # series is the same: those buckets really are read from the rollups.
    Measurement.objects.filter(started_at__gte=min(rolled_up), started_at__lt=max(rolled_up) + HOUR).delete()
    merge_cache.clear()
    assert readings.series(f) == series
