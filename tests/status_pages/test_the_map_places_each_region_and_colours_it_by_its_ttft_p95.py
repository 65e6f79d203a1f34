"""Each target's map (drawn on the server, no script) has a dot per region that measured it in the last 24 hours,
where the region is (x = longitude + 180, y = 90 - latitude), in the band of the p95 its table row shows, with the
figures in its title; the land under them stays in the map's box; a page that hides latency draws no map."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from probes.models import Measurement, Region, StatusPage
from tests.factories import MeasurementFactory

CIRCLE = re.compile(
    r'<circle class="status-dot dot-(\w+)" cx="([\d.]+)" cy="([\d.]+)" r="[\d.]+"><title>([^<]*)</title>'
)
BANDS = ((500.0, "fast"), (1000.0, "fair"), (2000.0, "slow"), (float("inf"), "slowest"))
PLACES = {"zz-lagos": (6.45, 3.39), "zz-oslo": (59.91, 10.75)}


def measure(scene, region, ttft_ms: float, n: int = 30) -> None:
    start = datetime.now(UTC) - timedelta(hours=3)
    rows = [{"scheduled_for": start + timedelta(minutes=i), "ttft_ms": ttft_ms} for i in range(n)]
    Measurement.objects.bulk_create(MeasurementFactory.build_rows(rows, probe=scene.probe, region=region))


def p95_cells(html: str) -> dict[str, float]:
    rows = re.findall(r'<tr data-region="([\w-]+)">.*?data-figure="p95">([^<]*)</td>', html)
    return {slug: float(value) for slug, value in rows}


def test_a_dot_per_region_where_it_is_in_its_p95_band(scene, client):
    for slug, (lat, lon) in PLACES.items():
        Region.objects.filter(slug=slug).update(latitude=lat, longitude=lon)
    lagos, oslo = scene.regions
    measure(scene, lagos, 1500.0)
    measure(scene, oslo, 300.0)

    html = client.get(f"/status/{scene.page.slug}/").content.decode()

    dots = {title.split(":")[0]: (band, float(x), float(y)) for band, x, y, title in CIRCLE.findall(html)}
    assert set(dots) == {"Lagos", "Oslo"}
    p95 = p95_cells(html)
    for name, slug in (("Lagos", "zz-lagos"), ("Oslo", "zz-oslo")):
        band, x, y = dots[name]
        lat, lon = PLACES[slug]
        assert (x, y) == (round(lon + 180, 1), round(90 - lat, 1))
        assert band == next(b for limit, b in BANDS if p95[slug] <= limit)
    # Apart: a slow region and a fast one.
    assert dots["Lagos"][0] != dots["Oslo"][0]
    assert "<script" not in html


def test_the_land_stays_in_the_maps_box(scene, client):
    measure(scene, scene.regions[0], 400.0)
    html = client.get(f"/status/{scene.page.slug}/").content.decode()
    (box,) = set(re.findall(r'<svg viewBox="([\d ]+)" role="img"', html))
    _x0, _y0, width, height = map(int, box.split())
    (path,) = re.findall(r'<path id="status-land" d="([^"]+)"', html)
    points = 0
    for ring in re.findall(r"M(-?\d+) (-?\d+)((?:l-?\d+ -?\d+)*)z", path):
        x, y = int(ring[0]), int(ring[1])
        for dx, dy in re.findall(r"l(-?\d+) (-?\d+)", ring[2]):
            x, y = x + int(dx), y + int(dy)
            assert 0 <= x <= width and 0 <= y <= height
            points += 1
    assert points > 500  # continents, not a placeholder
    # Written once, used by each target's map.
    assert html.count('id="status-land"') == 1


def test_a_page_that_hides_latency_draws_no_map(scene, client):
    measure(scene, scene.regions[0], 400.0)
    StatusPage.objects.filter(id=scene.page.id).update(show_latency=False)
    html = client.get(f"/status/{scene.page.slug}/").content.decode()
    assert "status-land" not in html
    assert "status-dot" not in html
