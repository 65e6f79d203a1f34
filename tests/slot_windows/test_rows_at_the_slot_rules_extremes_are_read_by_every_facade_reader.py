"""Every reader of probes.readings adds slot bounds to its started_at window: rows started as late or as early
as the rule allows, at the window's first and last instants, are still read, and rows whose slot lies inside a
window but whose start does not are still left out, for a raw window and for a window planned over days."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from probes import readings
from probes.exports import ExportFilters
from probes.histogram import exact_percentile
from probes.readings.alerts import window_calls
from probes.readings.selection import Selection
from tests.slot_windows.support import SINCE, edge_rows, started_within

pytestmark = pytest.mark.django_db

# A raw window (at most RAW_MAX) and one planned by days (no hour is rolled up, so all of it is raw rows).
SPANS = [timedelta(hours=3), timedelta(days=2)]


@pytest.fixture(params=SPANS, ids=["3h", "2d"])
def world(request, make_region, make_probe):
    region = make_region(slug="lagos")
    probe = make_probe(regions=[region])
    until = SINCE + request.param
    edge_rows(probe, region, SINCE, until)
    sel = Selection(since=SINCE, until=until, metric="ttft")
    return sel, probe, region, started_within(SINCE, until)


def test_the_map_table_ranking_and_phases_count_every_row_started_in_the_window(world):
    sel, _probe, region, expected = world
    assert len(expected) == 6
    assert [r["samples"] for r in readings.summary(sel)] == [len(expected)]
    assert [r["samples"] for r in readings.table(sel)] == [len(expected)]
    assert [r["samples"] for r in readings.ranking(region.slug, sel)] == [len(expected)]
    assert [r["samples"] for r in readings.phases(sel)] == [len(expected)]


def test_percentiles_are_those_of_the_rows_started_in_the_window(world):
    sel, _probe, _region, expected = world
    values = [m.ttft_ms for m in expected]
    (row,) = readings.table(sel)
    if sel.raw_only:
        assert row["p95"] == exact_percentile(values, 0.95)
    else:  # a histogram's bucket: within 1% of the exact value
        assert row["p95"] == pytest.approx(exact_percentile(values, 0.95), rel=0.01)
    _hists, (dist,) = readings.distribution_rows(sel)
    assert dist["samples"] == len(values)


def test_the_time_series_and_a_traffic_mix_count_every_row_started_in_the_window(world):
    sel, _probe, region, expected = world
    assert sum(r["samples"] for r in readings.series(sel)) == len(expected)
    assert [r["samples"] for r in readings.mix({region.id: 1.0}, sel)] == [len(expected)]


def test_regions_csv_buckets_count_every_row_started_in_the_window(world):
    sel, _probe, _region, expected = world
    hour = timedelta(hours=1)
    rolled = [r for label, a, b in readings.spans(sel, hour) for r in readings.bucket_rows(sel, label, a, b)]
    assert sum(r["samples"] for r in rolled) == len(expected)
    with connection.cursor() as cur:  # the raw path's statement, which the export runs under COPY
        cur.execute(readings.bucket_statement(sel, timedelta(minutes=5)))
        assert sum(row[3] for row in cur.fetchall()) == len(expected)


def test_stored_rows_and_an_alert_windows_calls_are_those_started_in_the_window(world):
    sel, probe, region, expected = world
    ids = {m.id for m in expected}
    stored = readings.stored_measurements(ExportFilters(since=sel.since, until=sel.until))
    assert {row["id"] for row in stored} == ids
    calls = window_calls(sel.since, sel.until, [probe.target_id])
    assert sorted(c.started_at for c in calls[(probe.target_id, region.id)]) == sorted(m.started_at for m in expected)
