"""In headless Chromium: the overview's map draws a region with no worker as a hollow grey ring and a
live one in colour, and when the live region's last worker stops, the page turns it dark by itself
(the map is read again now and then, since a dark region sends nothing that would redraw it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login, outside_browser_loop, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "dark-regions-are-hollow-51"
TRACES_JS = """() => {
  const m = document.getElementById('map');
  if (!m || !Array.isArray(m.data) || !m.querySelector('.scattergeo .point')) return null;
  const out = {};
  for (const t of m.data) {
    if (t.meta && t.meta.role) out[t.meta.role] = {slugs: t.customdata || [], symbol: t.marker && t.marker.symbol};
  }
  return out;
}"""


@pytest.fixture
def two_regions(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory

    Region.objects.all().delete()
    oslo = RegionFactory(slug="dk-oslo", name="Oslo", latitude=59.9, longitude=10.7)
    lima = RegionFactory(slug="dk-lima", name="Lima", latitude=-12.0, longitude=-77.0)
    probe = ProbeFactory(regions=[oslo, lima])
    now = datetime.now(UTC)
    for region in (oslo, lima):
        for i in range(4):
            MeasurementFactory(probe=probe, region=region, scheduled_for=now - timedelta(minutes=3 + i))
    worker = WorkerFactory(region=oslo, last_seen=now + timedelta(minutes=5))  # live for the whole test
    get_user_model().objects.create_user("darkwatcher", "d@example.com", PASSWORD)
    return worker


def stop(worker) -> None:
    from probes.models import Worker

    Worker.objects.filter(id=worker.id).update(state=Worker.STOPPED)


def test_a_dark_region_is_a_hollow_ring_and_a_stopped_region_turns_dark_on_the_open_page(
    two_regions, asgi_server, browser_page
):
    page = browser_page
    login(page, asgi_server.origin, "darkwatcher", PASSWORD)
    page.goto(f"{asgi_server.origin}/")
    page.wait_for_function(TRACES_JS, timeout=30_000)
    traces = page.evaluate(TRACES_JS)
    assert traces["dark"] == {"slugs": ["dk-lima"], "symbol": "circle-open"}, traces
    assert traces["regions"]["slugs"] == ["dk-oslo"], traces
    outside_browser_loop(stop, two_regions)
    wait_until(
        page,
        lambda: (page.evaluate(TRACES_JS) or {}).get("dark", {}).get("slugs") == ["dk-lima", "dk-oslo"],
        timeout=90,
        message="the map did not turn Oslo dark after its worker stopped",
    )
    assert "regions" not in page.evaluate(TRACES_JS)
