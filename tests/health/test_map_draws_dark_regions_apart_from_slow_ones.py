"""The map draws a dark region (no worker heard) as a hollow grey ring whatever its window holds, so
it never passes for a slow region, and rings a stale region in amber; the hover says which and since
when. /api/overview (what the live page redraws from) carries the same style and each row's status."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from latency import charts
from probes.models import Measurement
from probes.readings import RegionHealth
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory
from tests.web.test_charts_figures import region_row, role

SEEN = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def rows():
    lagos = {**region_row("lagos", 6.5, 3.4, samples=100, value=900.0), "id": 1}
    lima = {**region_row("lima", -12.0, -77.0, samples=100, value=300.0), "id": 2}
    oslo = {**region_row("oslo", 59.9, 10.7, samples=100, value=200.0), "id": 3}
    return [lagos, lima, oslo]


def test_a_dark_region_is_a_hollow_grey_ring_not_a_coloured_marker():
    health = {1: RegionHealth(1, "dark", SEEN), 2: RegionHealth(2, "live", SEEN), 3: RegionHealth(3, "live", SEEN)}
    fig = charts.world_map(rows(), None, "ttft", "p50", health)
    [dark] = role(fig, "dark")
    [coloured] = role(fig, "regions")
    assert list(dark.customdata) == ["lagos"]
    assert list(coloured.customdata) == ["lima", "oslo"]
    assert dark.marker.symbol == "circle-open" and dark.marker.color == charts.DARK_COLOR
    assert "dark: no worker seen since 2026-12-01 09:30 UTC" in dark.text[0]
    assert "100 samples" in dark.text[0]


def test_a_region_never_heard_from_says_so():
    health = {1: RegionHealth(1, "dark", None)}
    [dark] = role(charts.world_map(rows()[:1], None, "ttft", "p50", health), "dark")
    assert "dark: no worker has ever reported" in dark.text[0]


def test_a_stale_region_keeps_its_colour_inside_an_amber_ring():
    health = {1: RegionHealth(1, "live", SEEN), 2: RegionHealth(2, "stale", SEEN), 3: RegionHealth(3, "live", SEEN)}
    fig = charts.world_map(rows(), None, "ttft", "p50", health)
    [coloured] = role(fig, "regions")
    [ring] = role(fig, "stale")
    assert list(coloured.customdata) == ["lagos", "lima", "oslo"]
    assert list(ring.customdata) == ["lima"] and ring.marker.color == charts.STALE_COLOR
    assert ring.hoverinfo == "skip"
    assert "stale: the latest heartbeat came at 2026-12-01 09:30 UTC" in coloured.text[1]
    assert "stale" not in coloured.text[0]
    order = [(t.meta or {}).get("role") for t in fig.data]
    assert order.index("regions") < order.index("stale")


def test_without_health_the_map_is_drawn_as_before():
    fig = charts.world_map(rows(), None, "ttft", "p50")
    assert not role(fig, "dark") and not role(fig, "stale")
    assert len(role(fig, "regions")[0].customdata) == 3


@pytest.mark.django_db
def test_the_overview_api_marks_dark_and_live_regions(client, settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    lagos = RegionFactory(slug="map-lagos", name="Lagos", latitude=6.5, longitude=3.4)
    lima = RegionFactory(slug="map-lima", name="Lima", latitude=-12.0, longitude=-77.0)
    probe = ProbeFactory(regions=[lagos, lima])
    now = timezone.now()
    Measurement.objects.bulk_create(
        [
            MeasurementFactory.build(probe=probe, region=region, scheduled_for=now - timedelta(minutes=i + 1))
            for region in (lagos, lima)
            for i in range(5)
        ]
    )
    WorkerFactory(region=lima)
    WorkerFactory(region=lagos, last_seen=now - timedelta(hours=1))
    body = client.get("/api/overview").json()
    traces = {trace["meta"]["role"]: trace for trace in body["figure"]["data"]}
    assert traces["dark"]["customdata"] == ["map-lagos"]
    assert traces["regions"]["customdata"] == ["map-lima"]
    assert "dark: no worker seen since" in traces["dark"]["text"][0]
    assert {row["slug"]: row["status"] for row in body["rows"]} == {"map-lagos": "dark", "map-lima": "live"}


@pytest.mark.django_db
def test_the_map_legend_explains_dark_and_stale(client, settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    ProbeFactory()
    html = client.get("/").content.decode()
    assert "Hollow grey ring: dark region" in html and "Amber ring: stale region" in html
