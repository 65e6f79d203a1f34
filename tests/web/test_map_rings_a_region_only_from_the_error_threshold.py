"""The map's red ring marks a region whose calls fail often enough to matter (LATENCY_MAP_ERROR_RING_RATIO,
5 % by default), never one failure among many calls, and the legend and the hover state the threshold."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from latency import charts
from tests.factories import MeasurementFactory
from tests.web.test_charts_figures import TARGET, region_row, role


def outline(rows: list[dict]) -> dict[str, tuple[float, str]]:
    [markers] = role(charts.world_map(rows, TARGET, "ttft", "p50"), "regions")
    return {
        slug: (width, colour)
        for slug, width, colour in zip(markers.customdata, markers.marker.line.width, markers.marker.line.color)
    }


def test_one_failure_in_a_hundred_calls_draws_no_ring_and_six_do():
    drawn = outline(
        [
            region_row("oslo", 59.9, 10.7, samples=100, error_rate=0.01),
            region_row("lima", -12.0, -77.0, samples=100, error_rate=0.06),
        ]
    )
    assert drawn["oslo"] == (1.0, charts.CLEAN_OUTLINE)
    width, colour = drawn["lima"]
    assert colour == charts.ERROR_OUTLINE and width > 1.0


def test_the_hover_names_the_threshold_only_where_the_ring_is_drawn():
    [markers] = role(
        charts.world_map(
            [
                region_row("oslo", 59.9, 10.7, samples=100, error_rate=0.01),
                region_row("lima", -12.0, -77.0, samples=100, error_rate=0.06),
            ],
            TARGET,
            "ttft",
            "p50",
        ),
        "regions",
    )
    oslo, lima = markers.text
    assert "red ring: 5 % or more of calls failed" in lima
    assert "red ring" not in oslo


def test_the_threshold_is_a_setting(settings):
    settings.LATENCY_MAP_ERROR_RING_RATIO = 0.2
    drawn = outline([region_row("lima", -12.0, -77.0, samples=100, error_rate=0.06)])
    assert drawn["lima"] == (1.0, charts.CLEAN_OUTLINE)
    assert charts.error_ring_text().startswith("Red ring: 20 % or more of calls failed")


@pytest.mark.django_db
def test_the_overview_legend_states_the_threshold(client, django_user_model, settings, make_region, make_target,
                                                  make_probe):  # fmt: skip
    settings.LATENCY_MAP_ERROR_RING_RATIO = 0.05
    client.force_login(django_user_model.objects.create_user(username="ring", password="a-long-test-password-72"))
    region = make_region(slug="ring-oslo", latitude=59.9, longitude=10.7)
    target = make_target()
    MeasurementFactory(probe=make_probe(target=target, regions=[region]), region=region,
                       scheduled_for=timezone.now() - timedelta(minutes=2))  # fmt: skip
    html = client.get("/").content.decode()
    legend = re.search(r'<ul class="map-legend".*?</ul>', html, re.S).group(0)
    assert "Red ring: 5 % or more of calls failed (thicker up to 50 % or more)" in legend
