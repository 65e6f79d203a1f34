"""Rows for the region rollup tests: several targets, probes and regions with
random values of every histogram metric (some missing, some failures), and
the two reads the tests compare: every target through region rollups, and
the same targets named one by one through the per-probe rollups."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from probes import metrics
from probes.histogram import Histogram
from probes.models import Measurement, Target
from probes.readings.cache import merge_cache
from probes.readings.rows import Reading
from probes.readings.window import read_window
from probes.rollups import HOUR
from tests.factories import MeasurementFactory


def fill(probes, start: datetime, hours: int, *, per_hour: int = 2, seed: int = 0) -> int:
    """per_hour rows per probe, region and hour over [start, start + hours h),
    at random moments of the hour; returns the number of rows."""
    rng = random.Random(seed)
    rows = []
    regions = {probe.id: list(probe.regions.all()) for probe in probes}
    for h in range(hours):
        for probe in probes:
            for region in regions[probe.id]:
                for _ in range(per_hour):
                    started = start + HOUR * h + timedelta(seconds=rng.uniform(0, 3599))
                    failed = rng.random() < 0.15
                    values = {
                        m.column: (None if failed or rng.random() < 0.1 else rng.lognormvariate(5 + i % 3, 0.8))
                        for i, m in enumerate(metrics.HISTOGRAM)
                    }
                    rows.append(
                        {
                            "probe_id": probe.id,
                            "target_id": probe.target_id,
                            "region_id": region.id,
                            "scheduled_for": started,
                            "outcome": "timeout" if failed else "ok",
                            **values,
                        }
                    )
    if not rows:
        return 0
    first = probes[0]
    common = {"probe": first, "region": regions[first.id][0], "http_status": None, "output_tokens": None}
    common["itl_p50_ms"] = None
    Measurement.objects.bulk_create(MeasurementFactory.build_rows(rows, **common))
    return len(rows)


def read_both(since: datetime, until: datetime, regions=None) -> tuple[dict, dict]:
    """(every target through region rollups, the same targets named through
    the per-probe rollups), grouped by region, every histogram metric."""
    merge_cache.clear()
    targets = list(Target.objects.values_list("id", flat=True))
    common = {"group_by": ("region_id",), "target_ids": targets, "region_ids": regions}
    return (
        read_window(since, until, every_target=True, **common),
        read_window(since, until, every_target=False, **common),
    )


def assert_same(region_read: dict[tuple, Reading], probe_read: dict[tuple, Reading]) -> None:
    assert region_read.keys() == probe_read.keys()
    assert probe_read, "nothing read: the comparison would prove nothing"
    for group, expected in probe_read.items():
        got = region_read[group]
        assert (got.samples, got.errors) == (expected.samples, expected.errors), group
        for metric in metrics.HISTOGRAM_NAMES:
            assert got.hists[metric] == expected.hists[metric], (group, metric)
            assert isinstance(got.hists[metric], Histogram)
