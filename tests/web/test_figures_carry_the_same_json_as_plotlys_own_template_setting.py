"""Figures get plotly's white template without plotly validating and copying
it again (latency.charts.with_template, issue 17): each endpoint's figure,
on random and edge rows, is the same JSON as the one built with plotly's
normal API (update_layout(template="plotly_white")), so the page cannot
silently change."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from latency import charts
from latency.charts.distribution import histogram_figure
from latency.charts.over_time import timeseries_figure
from latency.charts.real_users import real_users_trace
from probes import metrics
from probes.histogram import Histogram
from probes.readings.fleet import RegionHealth
from probes.readings.realusers import RealUserRow, figure_keys

NOW = datetime(2026, 12, 1, 20, tzinfo=UTC)
TARGET = {"id": 1, "name": "gpt <b>", "location_name": "Ashburn", "lat": 39.04, "lon": -77.49}


def plotlys_own_template_setting(fig: go.Figure) -> go.Figure:
    fig.update_layout(template=charts.TEMPLATE)
    return fig


def regions(rnd: random.Random, count: int) -> list[dict]:
    rows = []
    for i in range(count):
        samples = rnd.choice([0, 1, rnd.randint(2, 5000)])
        value = rnd.choice([None, rnd.uniform(0.5, 30_000)]) if samples else None
        rows.append({
            "id": i, "slug": f"r{i}", "name": rnd.choice([f"Region {i}", "Frankfurt", "a & <b>"]),
            "city": "City", "country": "ZZ", "lat": rnd.uniform(-60, 70), "lon": rnd.uniform(-180, 180),
            "samples": samples, "errors": samples // 10, "error_rate": (samples // 10) / samples if samples else None,
            "value": value, "p50": value, "p95": value and value * 2, "connect_p50": 30.0,
            "floor_ms": rnd.choice([None, 40.0]), "tax_ms": rnd.choice([None, 12.5]),
        })  # fmt: skip
    return rows


def figures(seed: int) -> dict[str, go.Figure]:
    """Every endpoint's figure (latency.api) from the same random rows."""
    rnd = random.Random(seed)
    count = rnd.choice([1, 3, 15])
    rows = regions(rnd, count)
    metric = rnd.choice([m.name for m in metrics.METRICS])
    health = {0: RegionHealth(0, "stale", NOW), 1: RegionHealth(1, "dark", None)}
    real = [
        RealUserRow(
            bucket=None, country="ZZ", city=f"City {i}", latitude=rnd.uniform(-60, 60), longitude=rnd.uniform(-99, 99),
            target_id=None, target="", host="example.org", model="m", samples=rnd.randint(10, 99), errors=i,
            figures={k: rnd.uniform(10, 900) for k in figure_keys()},
        )
        for i in range(3)
    ]  # fmt: skip
    world = charts.world_map(rows, TARGET, metric, "p95", health)
    world.add_trace(real_users_trace(real, scale=False))
    real_only = charts.world_map([], None, metric, 0.5)
    real_only.add_trace(real_users_trace(real, scale=True))
    hists = {}
    for row in rows:
        hists[row["slug"]] = Histogram()
        for _ in range(rnd.choice([0, 1, 200])):
            hists[row["slug"]].add(rnd.lognormvariate(5, 1))
    series = [
        {"bucket_start": NOW - timedelta(hours=h), "region": row["slug"], "region_name": row["name"],
         "p50": rnd.choice([None, 300.0 + h]), "p95": 600.0 + h, "value": rnd.choice([None, 300.0 + h]), "samples": h}
        for row in rows for h in range(1, 25) if rnd.random() < 0.8
    ]  # fmt: skip
    window = (NOW - timedelta(hours=24), NOW)
    phases = [
        {"region": row["slug"], "region_name": row["name"], "samples": 10, "medians": {},
         "segments": {s: rnd.choice([None, rnd.uniform(0, 200)]) for s in charts.SEGMENT_COLORS}}
        for row in rows
    ]  # fmt: skip
    names = {row["slug"]: row["name"] for row in rows}
    return {
        "overview": world,
        "overview, real users": real_only,
        "histograms": histogram_figure(hists, metric, rnd.choice([0.5, 0.99]), names=names),
        "histograms, no data": histogram_figure({}, metric, 0.5),
        "timeseries": timeseries_figure(series, metric, "p50", step=timedelta(hours=1), window=window),
        "timeseries, lines": timeseries_figure(series[:40], metric, "p95", lines=True, step=timedelta(hours=1)),
        "timeseries, no data": timeseries_figure([], metric, "p50"),
        "phases": charts.phases_figure(phases),
        "no data": charts.no_data(go.Figure(), "nothing"),
    }


@pytest.mark.parametrize("seed", range(6))
def test_every_figure_is_the_json_plotlys_own_template_setting_gives(seed, monkeypatch):
    fast = {name: charts.figure_json(fig) for name, fig in figures(seed).items()}
    monkeypatch.setattr(charts, "with_template", plotlys_own_template_setting)
    reference = {name: charts.figure_json(fig) for name, fig in figures(seed).items()}
    assert fast.keys() == reference.keys()
    for name in fast:
        assert fast[name] == reference[name], name


def test_the_figures_template_is_plotlys_white_one_and_plotlys_stays_as_registered():
    registered = pio.templates[charts.TEMPLATE].to_plotly_json()
    for name, fig in figures(1).items():
        assert charts.figure_json(fig)["layout"]["template"] == registered, name
        fig.layout.template.layout.paper_bgcolor = "red"
    assert pio.templates[charts.TEMPLATE].to_plotly_json() == registered
