"""The map explains itself: a legend for every mark, a star that hides no
region, a floor line that says what to do when it has no number, a scale a
colour-blind reader can read, and no empty band above the world."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from latency import charts
from probes.models import Measurement
from tests.web.test_charts_figures import TARGET, region_row, role

# A region in the target's own city (Ashburn), and one far away.
ASHBURN = region_row("ashburn", 39.03, -77.48, samples=300, value=90.0, connect=2.0, floor=0.1)
LAGOS = region_row("lagos", 6.52, 3.38, samples=100, value=420.0, error_rate=0.6, connect=95.0, floor=90.1)


def test_the_star_lies_beneath_the_region_markers_and_is_larger_than_any_of_them():
    fig = charts.world_map([ASHBURN, LAGOS], TARGET, "ttft", "p50")
    order = [(t.meta or {}).get("role") for t in fig.data]
    assert order.index("target") < order.index("regions")
    [star] = role(fig, "target")
    [markers] = role(fig, "regions")
    assert star.marker.size > max(markers.marker.size) == charts.MARKER_MAX


def test_the_region_in_the_targets_city_says_the_target_is_hosted_there():
    fig = charts.world_map([ASHBURN, LAGOS], TARGET, "ttft", "p50")
    ashburn, lagos = role(fig, "regions")[0].text
    assert "the target is hosted here (★ AWS us-east-1, Ashburn)" in ashburn
    assert "hosted here" not in lagos


def test_without_a_floor_the_hover_says_how_to_get_one():
    rows = [{**LAGOS, "floor_ms": None, "tax_ms": None}]
    [several] = role(charts.world_map(rows, None, "ttft", "p50"), "regions")[0].text
    assert "physical floor (fiber, round trip): choose one target with a known location" in several
    unlocated = {**TARGET, "lat": None, "lon": None}
    [one] = role(charts.world_map(rows, unlocated, "ttft", "p50"), "regions")[0].text
    assert "physical floor (fiber, round trip): unknown: this target has no location set" in one
    for text in (several, one):
        assert "n/a (one target" not in text


def test_the_colour_scale_is_cividis_with_lighter_meaning_better_for_every_metric():
    [latency] = role(charts.world_map([ASHBURN, LAGOS], TARGET, "ttft", "p90"), "regions")
    [throughput] = role(charts.world_map([ASHBURN, LAGOS], TARGET, "tokens_per_s", "p90"), "regions")
    lightest = latency.marker.colorscale[-1][1]
    # Cividis ends light: reversed for times (low is good), as is for tokens/s (high is good).
    assert latency.marker.reversescale is not True and throughput.marker.reversescale is not True
    assert [c for _, c in latency.marker.colorscale] == [c for _, c in throughput.marker.colorscale][::-1]
    assert lightest == throughput.marker.colorscale[0][1]
    assert "RdYlGn" not in str(latency.marker.colorscale)
    assert latency.marker.colorbar.title.text == "p90 TTFT (ms)"
    assert throughput.marker.colorbar.title.text == "p90 tokens/s (tok/s)"


def test_the_error_ring_is_thin_from_the_threshold_and_thickest_from_half_failing():
    widths = [charts._outline_width(rate) for rate in (0.0, 0.01, 0.05, 0.25, 0.5, 0.9)]
    assert widths[0] == widths[1] < widths[2] < widths[3] < widths[4] == widths[5]
    assert charts._outline_color(0.01) != charts.ERROR_OUTLINE == charts._outline_color(0.05)


def test_the_map_has_no_top_margin_and_its_colour_scale_lies_under_it_leaving_it_the_whole_width():
    fig = charts.world_map([ASHBURN, LAGOS], TARGET, "ttft", "p50")
    assert fig.layout.margin.t == 0
    bar = role(fig, "regions")[0].marker.colorbar
    assert bar.orientation == "h" and bar.yanchor == "top" and bar.y <= 0


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-71"))
    return client


@pytest.mark.django_db
def test_the_overview_shows_a_legend_for_every_mark_of_the_map(signed_in, make_region, make_target, make_probe):
    region = make_region(slug="legend-oslo", latitude=59.9, longitude=10.7)
    target = make_target()
    probe = make_probe(target=target, regions=[region])
    now = timezone.now()
    Measurement.objects.create(
        probe=probe, target=target, region=region, scheduled_for=now - timedelta(minutes=2),
        started_at=now - timedelta(minutes=2), worker="w", outcome="ok", connection="warm", ttft_ms=300.0,
    )  # fmt: skip
    html = signed_in.get("/").content.decode()
    legend = re.search(r'<ul class="map-legend".*?</ul>', html, re.S)
    assert legend, "no legend under the map"
    entries = [re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li>(.*?)</li>", legend.group(0), re.S)]
    assert entries == [
        "Colour: the chosen percentile of the metric, lighter is better (scale under the map)",
        "Size: samples in the window",
        "Red ring: 5 % or more of calls failed (thicker up to 50 % or more)",
        "Grey: no data in this window",
        "Hollow grey ring: dark region, no worker heard lately (hover for since when)",
        "Amber ring: stale region, its workers are late",
        "★Star: where the target is hosted (one target chosen)",
        "Lines: great-circle paths from each region to the target",
        "◆Diamond: your real users by city (colour: their p50 time to first token; size: calls), "
        "once a city has 5 calls",
    ]
    assert 'aria-label="Map legend"' in legend.group(0)
