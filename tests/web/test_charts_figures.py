"""Chart builders: the right marks in the right places, hover texts that
carry the physics, and figures that travel as plain JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from latency import charts
from latency.charts.distribution import histogram_figure
from latency.charts.over_time import timeseries_figure
from latency.forms import dashboard_filters
from probes import readings
from probes.geo import great_circle_km, path_floor_ms
from probes.histogram import histogram_of
from probes.models import Measurement

TARGET = {"id": 1, "name": "gpt", "location_name": "AWS us-east-1, Ashburn", "lat": 39.04, "lon": -77.49}


def region_row(slug, lat, lon, *, samples=100, value=250.0, error_rate=0.0, connect=40.0, floor=None):
    return {
        "id": hash(slug) % 1000,
        "slug": slug,
        "name": slug.title(),
        "city": slug.title(),
        "country": "ZZ",
        "lat": lat,
        "lon": lon,
        "samples": samples,
        "errors": round(samples * error_rate),
        "error_rate": error_rate if samples else None,
        "p50": value if samples else None,
        "p95": value * 2 if samples else None,
        "value": value if samples else None,
        "connect_p50": connect if samples else None,
        "floor_ms": floor,
        "tax_ms": connect - floor if samples and floor is not None else None,
    }


@pytest.fixture
def summary():
    return [
        region_row("lagos", 6.52, 3.38, samples=400, value=420.0, error_rate=0.25, connect=95.0, floor=90.1),
        region_row("london", 51.51, -0.13, samples=100, value=180.0, connect=80.0, floor=59.2),
        region_row("tokyo", 35.68, 139.65, samples=20, value=390.5, error_rate=0.05, connect=170.0, floor=109.0),
        region_row("sydney", -33.87, 151.21, samples=0, floor=159.0),
    ]


def role(fig: go.Figure, name: str) -> list:
    return [t for t in fig.data if (t.meta or {}).get("role") == name]


# The map -----------------------------------------------------------------------------


def test_the_map_has_a_coloured_marker_per_region_with_data_and_grey_ones_without(summary):
    fig = charts.world_map(summary, TARGET, "ttft", "p50")
    [markers] = role(fig, "regions")
    assert list(markers.customdata) == ["lagos", "london", "tokyo"]
    assert (list(markers.lat), list(markers.lon)) == ([6.52, 51.51, 35.68], [3.38, -0.13, 139.65])
    assert list(markers.marker.color) == [420.0, 180.0, 390.5]
    assert markers.marker.colorbar.title.text == "p50 TTFT (ms)"
    sizes = list(markers.marker.size)
    assert sizes[0] == charts.MARKER_MAX and sizes[1] > sizes[2] >= charts.MARKER_MIN
    # Red outlines that grow with the error rate; none for a clean region.
    widths, colours = list(markers.marker.line.width), list(markers.marker.line.color)
    assert widths[0] > widths[2] > widths[1]
    assert colours[0] == colours[2] == charts.ERROR_OUTLINE != colours[1]

    [grey] = role(fig, "no-data")
    assert list(grey.customdata) == ["sydney"]
    assert grey.marker.color == charts.NO_DATA_COLOR
    assert "no data in this window" in grey.text[0]


def test_the_map_marks_the_target_with_a_star_and_draws_a_great_circle_from_each_region_with_data(summary):
    fig = charts.world_map(summary, TARGET, "ttft", 0.5)
    [star] = role(fig, "target")
    assert star.marker.symbol == "star"
    assert (list(star.lat), list(star.lon)) == ([TARGET["lat"]], [TARGET["lon"]])
    assert list(star.text) == ["AWS us-east-1, Ashburn"]

    paths = role(fig, "path")
    assert [p.meta["region"] for p in paths] == ["lagos", "london", "tokyo"]
    for path, row in zip(paths, summary):
        assert path.mode == "lines"
        assert (path.lat[0], path.lon[0]) == pytest.approx((row["lat"], row["lon"]))
        assert (path.lat[-1], path.lon[-1]) == pytest.approx((TARGET["lat"], TARGET["lon"]))
        # Every point lies on the great circle: no detour adds distance.
        whole = great_circle_km(row["lat"], row["lon"], TARGET["lat"], TARGET["lon"])
        for lat, lon in zip(path.lat, path.lon):
            via = great_circle_km(row["lat"], row["lon"], lat, lon) + great_circle_km(
                lat, lon, TARGET["lat"], TARGET["lon"]
            )
            assert via == pytest.approx(whole, abs=1e-6)


def test_the_maps_hover_text_carries_percentiles_samples_errors_floor_connect_and_tax(summary):
    fig = charts.world_map(summary, TARGET, "ttft", "p50")
    [markers] = role(fig, "regions")
    lagos = markers.text[0]
    for expected in (
        "p50 TTFT: 420 ms",
        "p95 TTFT: 840 ms",
        "samples: 400",
        "error rate: 25.0 %",
        "physical floor (fiber, round trip): 90.1 ms",
        "measured connect p50: 95.0 ms",
        "latency tax: 4.9 ms",
    ):
        assert expected in lagos


def test_a_map_without_a_located_target_has_no_star_and_no_paths(summary):
    for target in (None, {**TARGET, "lat": None, "lon": None}):
        fig = charts.world_map(summary, target, "connect", "p95")
        assert role(fig, "target") == role(fig, "path") == []
        assert len(role(fig, "regions")[0].lat) == 3


def test_the_map_layout_is_a_natural_earth_projection_in_the_white_template(summary):
    fig = charts.world_map(summary, TARGET, "ttft", "p50")
    assert fig.layout.geo.projection.type == "natural earth"
    assert fig.layout.geo.showland and fig.layout.geo.showcountries
    assert fig.layout.template.layout.paper_bgcolor == pio.templates["plotly_white"].layout.paper_bgcolor
    assert "Open Sans" not in fig.layout.font.family
    assert fig.layout.margin.t <= 10 and fig.layout.margin.l == 0


def test_a_great_circle_between_two_points_on_the_equator_runs_along_it():
    lats, lons = charts.great_circle_points(0.0, 0.0, 0.0, 90.0, n=5)
    assert lats == pytest.approx([0.0] * 5, abs=1e-9)
    assert lons == pytest.approx([0.0, 22.5, 45.0, 67.5, 90.0])
    # Across the antimeridian the short way, not around the world.
    lats, lons = charts.great_circle_points(0.0, 170.0, 0.0, -170.0, n=3)
    assert abs(lons[1]) == pytest.approx(180.0)


# Distributions, series and phases -----------------------------------------------------


def series_rows():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    rows = []
    for slug, name in (("lagos", "Lagos"), ("london", "London")):
        for k in range(6):
            if slug == "london" and k == 3:
                continue  # a bucket without data
            rows.append(
                {
                    "bucket_start": start + timedelta(minutes=30 * k),
                    "region": slug,
                    "region_name": name,
                    "p50": 100.0 + k,
                    "p95": 200.0 + k,
                    "samples": 10,
                    "mean": None,
                }
            )
    return rows


def test_the_phases_figure_stacks_six_segments_per_region_in_fixed_colours():
    rows = [
        {
            "region": slug,
            "region_name": slug.title(),
            "samples": 10,
            "medians": {},
            "segments": {
                "dns": 5.0,
                "connect": 20.0,
                "tls": 40.0,
                "server_wait": 200.0,
                "first_token": 80.0,
                "streaming": 900.0,
            },
        }
        for slug in ("lagos", "london")
    ]
    fig = charts.phases_figure(rows)
    assert [t.meta["segment"] for t in fig.data] == list(readings.SEGMENTS)
    assert [t.marker.color for t in fig.data] == [charts.SEGMENT_COLORS[s] for s in readings.SEGMENTS]
    assert all(t.orientation == "h" and list(t.y) == ["Lagos", "London"] for t in fig.data)
    assert fig.layout.barmode == "stack"
    assert [t.x[0] for t in fig.data] == [5.0, 20.0, 40.0, 200.0, 80.0, 900.0]


# JSON ---------------------------------------------------------------------------------


def test_figure_json_is_plain_json_even_with_missing_values(summary):
    summary[1]["value"] = float("nan")
    figures = [
        charts.world_map(summary, TARGET, "ttft", "p50"),
        histogram_figure({"lagos": histogram_of([1.0, 2.0, 300.0])}, "ttft"),
        timeseries_figure(series_rows(), "ttft"),
        timeseries_figure(series_rows(), "ttft", lines=True),
        charts.phases_figure([]),
    ]
    for fig in figures:
        data = charts.figure_json(fig)
        assert set(data) >= {"data", "layout"}
        text = json.dumps(data, allow_nan=False)
        assert json.loads(text) == data
        # No datetimes; the heatmap's object arrays hold plain values only, as lists in the JSON.
        json.dumps(fig.to_plotly_json(), allow_nan=True, default=lambda array: array.tolist())


def test_figures_built_from_real_query_rows_serialise(make_region, make_target, make_probe):
    now = datetime.now(UTC)
    regions = [make_region(slug="a", latitude=6.5, longitude=3.4), make_region(slug="b", latitude=51.5, longitude=-0.1)]
    target = make_target(location_name="Ashburn", latitude=39.0, longitude=-77.5)
    probe = make_probe(target=target, regions=regions)
    rows = []
    for i in range(60):
        started = now - timedelta(minutes=50) + timedelta(seconds=45 * i)
        for region in regions:
            rows.append(
                Measurement(
                    probe=probe,
                    target=target,
                    region=region,
                    scheduled_for=started,
                    started_at=started,
                    worker="w",
                    outcome="ok" if i % 9 else "timeout",
                    connection="cold",
                    dns_ms=5.0,
                    connect_ms=60.0 + i,
                    tls_ms=120.0,
                    ttfb_ms=400.0 + i,
                    ttft_ms=600.0 + 3 * i,
                    total_ms=2000.0 + i,
                    tokens_per_s=40.0,
                )
            )
    Measurement.objects.bulk_create(rows)
    f = dashboard_filters({"target": [str(target.id)], "window": ["1h"]}, now)
    summary = readings.summary(f)
    where = {
        "name": target.name,
        "location_name": target.location_name,
        "lat": target.latitude,
        "lon": target.longitude,
    }
    fig = charts.world_map(summary, where, f.metric, f.percentile)
    assert len(role(fig, "path")) == 2
    for row, text in zip(summary, role(fig, "regions")[0].text):
        assert f"physical floor (fiber, round trip): {charts._fmt(row['floor_ms'])}" in text
        assert row["floor_ms"] == pytest.approx(path_floor_ms(row["lat"], row["lon"], 39.0, -77.5))
        assert f"latency tax: {charts._fmt(row['tax_ms'])}" in text
    for figure in (
        fig,
        histogram_figure(readings.distribution(f), f.metric, f.percentile),
        timeseries_figure(readings.series(f), f.metric, f.percentile, step=readings.bucket_size(f)),
        timeseries_figure(readings.series(f), f.metric, f.percentile, lines=True),
        charts.phases_figure(readings.phases(f)),
    ):
        json.dumps(charts.figure_json(figure), allow_nan=False)
