"""The overview map's real-users layer: with layer=both (the default) diamonds by city beside the regions'
markers, with layer=real the cities alone, with layer=synthetic none; the hover says what users near a city
see; /api/real-users sends the rows; both under the dashboard's access rule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import IngestSourceFactory, MeasurementFactory
from tests.realusers_pages.support import LAGOS, LONDON, calls

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(make_region, make_target, make_probe):
    region = make_region(slug="lagos", name="Lagos", city="Lagos", country="NG", latitude=6.45, longitude=3.4)
    target = make_target(name="Gamma", url="https://api.example.com/v1/chat/completions", model="gpt-4o")
    probe = make_probe(target=target, regions=[region])
    now = timezone.now()
    MeasurementFactory(probe=probe, region=region, scheduled_for=now - timedelta(minutes=3))
    source = IngestSourceFactory()
    calls(source.id, 6, now - timedelta(minutes=30), LAGOS, ttft_ms=1900.0, total_ms=4000.0)
    calls(source.id, 4, now - timedelta(minutes=30), LONDON)  # under the minimum: not on the map
    return target


def roles(body: dict) -> list[str]:
    return [trace.get("meta", {}).get("role") for trace in body["figure"]["data"]]


def region_drawn(body: dict) -> bool:
    # The region has no worker here, so it is drawn as dark: its marker, whichever kind.
    return any("lagos" in (t.get("customdata") or []) for t in body["figure"]["data"])


def real_trace(body: dict) -> dict:
    return next(t for t in body["figure"]["data"] if t.get("meta", {}).get("role") == "real-users")


def test_both_layers_draw_the_cities_beside_the_regions(client, viewer, world):
    body = client.get("/api/overview", {"window": "24h"}).json()
    assert region_drawn(body) and "real-users" in roles(body)
    trace = real_trace(body)
    assert (trace["lat"], trace["lon"], trace["marker"]["symbol"]) == ([6.45], [3.4], "diamond")
    assert trace["text"] == [
        "your users near Lagos: p50 TTFT 1.9 s, p95 1.9 s, 6 calls<br>p50 total time 4.0 s, p95 4.0 s"
    ]
    assert [(r["city"], r["samples"]) for r in body["real_users"]] == [("Lagos", 6)]


def test_the_real_layer_alone_and_the_synthetic_layer_alone(client, viewer, world):
    real = client.get("/api/overview", {"window": "24h", "layer": "real"}).json()
    assert roles(real) == ["real-users"] and real["no_data"] == ""
    assert real_trace(real)["marker"]["showscale"] is True
    synthetic = client.get("/api/overview", {"window": "24h", "layer": "synthetic"}).json()
    assert "real-users" not in roles(synthetic) and region_drawn(synthetic)


def test_the_real_layer_says_why_it_is_empty(client, viewer, world, settings):
    settings.LATENCY_REAL_USERS_MIN_SAMPLES = 50
    body = client.get("/api/overview", {"window": "24h", "layer": "real"}).json()
    assert body["no_data"].startswith("No city of real users reached the minimum of 50 calls in the last 24 h")
    body = client.get("/api/overview", {"window": "custom", "since": "10d", "until": "9d", "layer": "real"}).json()
    assert body["no_data"].startswith("No real users' calls between ")


def test_a_bad_layer_is_refused_by_name(client, viewer, world):
    response = client.get("/api/overview", {"layer": "satellite"})
    assert response.status_code == 400
    assert response.json() == {"error": "layer must be one of synthetic, real, both", "param": "layer"}


def test_the_api_sends_rows_by_city_and_target_with_the_figures(client, viewer, world):
    body = client.get("/api/real-users", {"window": "24h", "target": str(world.id)}).json()
    [row] = body["rows"]
    assert (row["city"], row["target"], row["model"], row["samples"]) == ("Lagos", "Gamma", "gpt-4o", 6)
    assert row["ttft_p50"] == pytest.approx(1900, rel=0.01) and row["total_p95"] == pytest.approx(4000, rel=0.01)
    assert body["min_samples"] == 5


def test_the_overview_page_offers_the_layer_selector(client, viewer, world):
    page = client.get("/", {"layer": "real"}).content.decode()
    assert '<select name="layer" form="filters">' in page
    assert '<option value="real" selected>real users</option>' in page


def test_the_api_follows_the_dashboards_access_rule(client, world, settings):
    settings.LATENCY_PUBLIC_DASHBOARD = False
    response = client.get("/api/real-users")
    assert response.status_code == 403 and response.json() == {"error": "login required"}
    settings.LATENCY_PUBLIC_DASHBOARD = True
    assert client.get("/api/real-users").status_code == 200
