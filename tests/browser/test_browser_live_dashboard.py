"""End to end in headless Chromium: log in, see the overview map, hear a new measurement live, stay offline.

The site runs on a real uvicorn (tests.browser.asgi_server) over the test database; this process writes rows with
the ORM (committed: transactional_db) and announces them with probes.live.broadcast, exactly as the ingest worker
does after its commit. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import math
import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import live_item, login, outside_browser_loop, wait_until
from tests.browser.conftest import snap

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
    # Every region has a worker heard at the start: it stays live (coloured markers) however slow the run.
    pytest.mark.asgi_env(LATENCY_REGION_STALE_AFTER="3600", LATENCY_REGION_DARK_AFTER="7200"),
]

PASSWORD = "correct-horse-battery-staple-42"
# slug, name, country, latitude, longitude, typical TTFT (ms)
DATA_REGIONS = [
    ("bt-lagos", "Lagos", "NG", 6.5244, 3.3792, 620.0),
    ("bt-london", "London", "GB", 51.5074, -0.1278, 310.0),
    ("bt-tokyo", "Tokyo", "JP", 35.6762, 139.6503, 480.0),
    ("bt-sydney", "Sydney", "AU", -33.8688, 151.2093, 540.0),
    ("bt-saopaulo", "São Paulo", "BR", -23.5505, -46.6333, 450.0),
]
# Active, probed, but nothing measured yet: it must not be among the regions with data.
EMPTY_REGION = ("bt-nairobi", "Nairobi", "KE", -1.2921, 36.8219)

MAP_READY_JS = """() => {
  const m = document.querySelector('#map');
  return !!(m && Array.isArray(m.data) && m.data.some(t => t.type === 'scattergeo')
            && m.querySelector('.scattergeo .point'));
}"""
MAP_POINTS_JS = """() => {
  const m = document.querySelector('#map');
  const traces = (m.data || []).filter(t => t.type === 'scattergeo').map(t => ({
    name: t.name || '', lat: Array.from(t.lat || []), lon: Array.from(t.lon || []),
  }));
  return {traces, svgPoints: m.querySelectorAll('.scattergeo .point').length};
}"""
LIVE_STATE_JS = """() => {
  const el = document.querySelector('#live-count');
  return el ? {text: el.textContent.trim(), data: Object.assign({}, el.dataset)} : null;
}"""
TABLE_SAMPLES_JS = """([region, samples]) => {
  const table = document.querySelector('#region-target-table');
  if (!table) return false;
  const keys = Array.from(table.tHead.rows[0].cells).map(th => th.dataset.key);
  const col = keys.indexOf('samples');
  return Array.from(table.tBodies[0].rows).some(
    tr => tr.cells[0] && tr.cells[0].textContent.trim() === region && tr.cells[col]
          && tr.cells[col].textContent.trim() === String(samples));
}"""
LIVE_SHOWS_JS = """(id) => {
  const el = document.querySelector('#live-count');
  return !!el && Object.values(el.dataset).includes(String(id));
}"""


def _first_int(text: str) -> int:
    match = re.search(r"\d[\d,]*", text or "")
    return int(match.group(0).replace(",", "")) if match else 0


def _measurement_fields(rng: random.Random, base_ttft: float, connection: str, failed: bool) -> dict:
    if failed:
        return {"outcome": "timeout", "connection": connection, "error": "deadline exceeded", "total_ms": 30000.0}
    ttft = base_ttft * math.exp(rng.gauss(0, 0.25))
    cold = connection == "cold"
    dns = rng.uniform(2, 30) if cold else None
    connect = base_ttft * 0.08 * rng.uniform(0.9, 1.3) if cold else None
    tls = base_ttft * 0.16 * rng.uniform(0.9, 1.3) if cold else None
    ttfb = ttft * rng.uniform(0.55, 0.8)
    tokens = rng.randint(20, 64)
    total = ttft + tokens * rng.uniform(8, 14)
    return {
        "outcome": "ok",
        "connection": connection,
        "http_status": 200,
        "http_version": "HTTP/1.1",
        "dns_ms": dns,
        "connect_ms": connect,
        "tls_ms": tls,
        "ttfb_ms": ttfb,
        "first_event_ms": ttfb + 1.0,
        "ttft_ms": ttft,
        "ttfat_ms": ttft + rng.uniform(0, 5),
        "total_ms": total,
        "output_tokens": tokens,
        "tokens_estimated": False,
        "tokens_per_s": (tokens - 1) / ((total - ttft) / 1000.0),
    }


@pytest.fixture
def dashboard_data(transactional_db):
    """A user, six regions (five with an hour of measurements), one target and its probe."""
    from django.contrib.auth import get_user_model

    from probes.models import Measurement, Probe, Region, Target

    # Exactly our regions: the seeded ones (present right after migrate) would add markers of their own.
    Region.objects.all().delete()
    regions = {
        slug: Region.objects.create(slug=slug, name=name, city=name, country=cc, latitude=lat, longitude=lon)
        for slug, name, cc, lat, lon, _ in DATA_REGIONS
    }
    slug, name, cc, lat, lon = EMPTY_REGION
    empty = Region.objects.create(slug=slug, name=name, city=name, country=cc, latitude=lat, longitude=lon)
    target = Target.objects.create(
        name="Browser test target",
        api_style="openai",
        url="http://127.0.0.1:9/v1/chat/completions",
        model="test-model",
        api_key_env="TEST_API_KEY",
    )
    probe = Probe.objects.create(target=target, name="browser probe", interval_seconds=60, timeout_seconds=30.0)
    probe.regions.set([*regions.values(), empty])

    rng = random.Random(20260601)
    now = datetime.now(UTC).replace(microsecond=0)
    rows = []
    for slug, _name, _cc, _lat, _lon, base in DATA_REGIONS:
        for i in range(30):  # one every two minutes over the last hour
            slot = now - timedelta(minutes=2 * i + 1)
            connection = "cold" if i % 3 == 0 else "warm"
            rows.append(
                Measurement(
                    probe=probe,
                    target=target,
                    region=regions[slug],
                    scheduled_for=slot,
                    started_at=slot + timedelta(milliseconds=rng.randint(5, 400)),
                    worker=f"{slug}-worker",
                    **_measurement_fields(rng, base, connection, failed=(i == 7)),
                )
            )
    Measurement.objects.bulk_create(rows)
    from tests.factories import WorkerFactory

    # A worker in every region: without one a region is drawn dark, whatever its data.
    for region in [*regions.values(), empty]:
        WorkerFactory(region=region)
    user = get_user_model().objects.create_user("viewer", "viewer@example.com", PASSWORD)
    return {"user": user, "regions": regions, "empty": empty, "target": target, "probe": probe, "now": now}


def _points_near(traces: list[dict], lat: float, lon: float) -> int:
    return sum(
        1
        for t in traces
        for la, lo in zip(t["lat"], t["lon"], strict=False)
        if la is not None and lo is not None and abs(la - lat) < 1e-3 and abs(lo - lon) < 1e-3
    )


# dashboard_data first: the ORM cannot run in this thread once Playwright's loop is up (see outside_browser_loop).
def test_login_map_and_live_update_offline(dashboard_data, asgi_server, browser_page):
    from probes import live
    from probes.models import Measurement

    page = browser_page
    rec = page.recorder
    origin = asgi_server.origin

    # 1. Log in through the form.
    login(page, origin, "viewer", PASSWORD)
    if not page.query_selector("#map"):
        page.goto(f"{origin}/")

    # 2. The overview map: the regions' trace has one marker per region with data. A region without data may be
    #    drawn in a trace of its own (e.g. "no data"), never in that one.
    page.wait_for_function(MAP_READY_JS, timeout=20_000)
    page.wait_for_load_state("networkidle")
    points = page.evaluate(MAP_POINTS_JS)
    traces = points["traces"]
    region_traces = [t for t in traces if any(_points_near([t], lat, lon) for *_, lat, lon, _ in DATA_REGIONS)]
    assert len(region_traces) == 1, f"expected one trace holding the regions with data: traces={traces}"
    regions_trace = region_traces[0]
    for slug, _name, _cc, lat, lon, _ in DATA_REGIONS:
        assert _points_near([regions_trace], lat, lon) == 1, f"{slug}: expected one marker at ({lat}, {lon}): {traces}"
    assert len(regions_trace["lat"]) == len(DATA_REGIONS), f"extra markers in the regions trace: {regions_trace}"
    _, _, _, lat, lon = EMPTY_REGION
    assert _points_near([regions_trace], lat, lon) == 0, f"the region without data is among them: {regions_trace}"
    drawn = sum(len(t["lat"]) for t in traces)
    assert points["svgPoints"] == drawn, f"{drawn} points in the traces but {points['svgPoints']} drawn in the SVG"
    snap(page, "overview")

    # 3. Live: a new row, announced after its commit, shows without a reload.
    wait_until(
        page,
        lambda: any("/ws/measurements/" in u for u in rec.websockets_open),
        10,
        f"the page's websocket to /ws/measurements/ to open (opened: {rec.websockets_open}, "
        f"created: {rec.websockets}, page errors: {rec.page_errors})",
    )
    before = page.evaluate(LIVE_STATE_JS)
    assert before is not None, "no #live-count element on the overview page"
    page.evaluate("() => { window.__atlasNoReload = 'still-here'; }")
    navigations = len(rec.navigations)

    data = dashboard_data

    def store_and_announce() -> int:
        # As the ingest worker does: the row is committed (autocommit), then announced.
        slot = datetime.now(UTC).replace(microsecond=0)
        row = Measurement.objects.create(
            probe=data["probe"],
            target=data["target"],
            region=data["regions"]["bt-london"],
            scheduled_for=slot,
            started_at=slot + timedelta(milliseconds=20),
            worker="bt-london-worker",
            **_measurement_fields(random.Random(1), 300.0, "warm", failed=False),
        )
        live.broadcast([live_item(row)])
        return row.id

    new_id = outside_browser_loop(store_and_announce)
    page.wait_for_function(LIVE_SHOWS_JS, arg=new_id, timeout=5_000)
    after = page.evaluate(LIVE_STATE_JS)
    assert _first_int(after["text"]) == _first_int(before["text"]) + 1, f"#live-count went from {before} to {after}"
    assert page.evaluate("() => window.__atlasNoReload") == "still-here", "the page reloaded"
    assert len(rec.navigations) == navigations, f"the page navigated: {rec.navigations[navigations:]}"
    # The message also makes the page refetch its charts: London's row in the table counts the new sample.
    page.wait_for_function(TABLE_SAMPLES_JS, arg=["London", 31], timeout=5_000)
    snap(page, "live")

    # 4. Nothing left the host: plotly and its map come from our static files.
    assert rec.foreign(origin) == [], f"requests left the host: {rec.foreign(origin)}"
    assert any(u.startswith(f"{origin}/static/vendor/plotly/") for u in rec.urls), (
        "plotly.js not served from /static/vendor/"
    )
    assert any(u.startswith(f"{origin}/static/vendor/topojson/world_") for u in rec.urls), (
        "the map's topojson was not fetched from /static/vendor/topojson/ (plot config topojsonURL)"
    )
    assert rec.page_errors == [], f"uncaught errors in the page: {rec.page_errors}"
    errors = [e for e in rec.http_errors if not e.endswith("/favicon.ico")]
    assert errors == [] and rec.failed == [], f"failed requests: {errors + rec.failed}"
