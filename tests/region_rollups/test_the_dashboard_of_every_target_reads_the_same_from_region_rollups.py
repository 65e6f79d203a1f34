"""The dashboard's figures of every target (the map, the distribution, the
phases and the time series at 7 and 30 days and a custom window) come from
region rollups, and equal the same figures with every target named, which
merge every probe's rollups."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.models import RollupHour, Target
from probes.readings.cache import merge_cache
from probes.readings.rollup import region_series
from probes.readings.selection import METRIC_CHOICES
from probes.rollups import DAY, HOUR, floor_hour, rebuild_range
from tests.factories import RegionFactory
from tests.region_rollups.conftest import four_probes
from tests.region_rollups.rows import fill
from tests.support import shared_rows

pytestmark = pytest.mark.django_db


def both(now, **params):
    """(every target, every target named) selections of the same window."""
    query = {k: [v] for k, v in params.items()}
    every = dashboard_filters(query, now)
    named = dashboard_filters({**query, "target": [str(t) for t in Target.objects.values_list("id", flat=True)]}, now)
    assert not every.target_ids and named.target_ids
    return every, named


def read(fn, f):
    merge_cache.clear()
    return fn(f)


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    """Nine days of rows, rolled up, that every test of the module only reads: written once (shared_rows)."""
    with shared_rows(django_db_blocker):
        now = datetime.now(UTC)
        probes = four_probes([RegionFactory() for _ in range(3)])
        start = floor_hour(now) - 9 * DAY - 5 * HOUR
        fill(probes, start, 9 * 24 + 5, per_hour=1)
        rebuild_range(start, floor_hour(now))
        # One hour left unmarked in the middle, as after a late row.
        RollupHour.objects.filter(hour=floor_hour(now) - 4 * DAY - 7 * HOUR).delete()
        yield probes


@pytest.mark.parametrize("window", ["7d", "30d"])
@pytest.mark.parametrize("metric", METRIC_CHOICES)
def test_the_time_series_of_every_target_equals_the_named_targets(filled, now, window, metric, monkeypatch):
    every, named = both(now, window=window, metric=metric, percentile="p99")
    blocks_read = []

    def spy(*args):
        blocks_read.extend(args[3])
        return region_series(*args)

    # The module (probes.readings re-exports its function under the same name).
    monkeypatch.setattr(sys.modules["probes.readings.series"], "region_series", spy)
    got, want = read(readings.series, every), read(readings.series, named)
    # Whole buckets from one block each: 3 h at 7 days, 12 h at 30 days.
    assert {span for span, _ in blocks_read} >= {readings.bucket_size(every) // HOUR}
    assert got and len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a["at"] - b["at"] < timedelta(seconds=1)
        assert {**a, "at": None} == {**b, "at": None}


def test_a_custom_window_of_two_hour_buckets_reads_the_same(filled, now):
    since = floor_hour(now) - 5 * DAY + timedelta(minutes=13)
    every, named = both(now, since=since.isoformat(), until=(since + 5 * DAY).isoformat())
    assert readings.bucket_size(every) == 2 * HOUR
    got, want = read(readings.series, every), read(readings.series, named)
    assert got and [{**a, "at": None} for a in got] == [{**b, "at": None} for b in want]


@pytest.mark.parametrize("window", ["7d", "30d"])
def test_the_map_distribution_and_phases_of_every_target_equal_the_named_targets(filled, now, window):
    every, named = both(now, window=window)
    for fn in (readings.summary, readings.phases, readings.distribution_rows):
        got, want = read(fn, every), read(fn, named)
        assert got and got == want, fn.__name__
