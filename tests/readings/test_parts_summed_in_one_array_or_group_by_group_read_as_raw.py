"""read_window sums its rolled-up parts, raw rows and the first hour's rows before the window per metric in one
array, a row per group, when every part came back dense; with a part of per-group dicts (too many groups for
one array, or a refused stored histogram), or more groups in all than one array may hold, it merges group by
group. Every way gives the figures of the raw rows."""

from __future__ import annotations

from datetime import timedelta
from itertools import count

import pytest

from probes.readings import rollup, window
from probes.readings.plan import coverage
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements
from tests.support import assert_rollups_read_as_raw

METRICS = ("ttft", "connect")


@pytest.fixture
def window_with_every_kind_of_part(make_probe, make_region, now):
    """Two probes of two targets in three regions over 30 hours, and a window from early in a marked hour (its
    rows before the window taken away) to the current hour: complete days, loose hours, the first hour whole,
    raw rows."""
    regions = [make_region() for _ in range(3)]
    probes = [make_probe(regions=regions), make_probe(regions=regions[1:])]
    current = floor_hour(now)
    start = current - 30 * HOUR
    for i, probe in enumerate(probes):
        for j, region in enumerate(probe.regions.all()):
            spread_measurements(probe, region, start, now, 30 * 6, seed=10 * i + j, fail_every=7)
    rebuild_range(start, current)
    since = start + 2 * HOUR + timedelta(minutes=12)
    plan = coverage(since, now, head=True)
    assert plan.minus and plan.head
    return since, now, {"target_ids": [p.target_id for p in probes], "region_ids": [r.id for r in regions]}


@pytest.mark.parametrize(
    "parts",
    ["dense", "one part of dicts", "every part of dicts", "more groups than one array"],
)
def test_every_way_of_merging_the_parts_reads_as_the_raw_rows(window_with_every_kind_of_part, monkeypatch, parts):
    since, until, ids = window_with_every_kind_of_part
    if parts == "one part of dicts":
        calls = count()
        dense_counts = rollup.dense_counts
        monkeypatch.setattr(rollup, "dense_counts", lambda datas: None if next(calls) == 1 else dense_counts(datas))
    elif parts == "every part of dicts":
        monkeypatch.setattr(rollup, "DENSE_GROUPS_MAX", 0)
    elif parts == "more groups than one array":
        monkeypatch.setattr(window, "DENSE_GROUPS_MAX", 1)
    for group_by in [("region_id",), ("region_id", "target_id"), ("probe_id", "region_id")]:
        assert_rollups_read_as_raw(since, until, METRICS, group_by=group_by, **ids)
