"""In headless Chromium: the overview's map draws real users' cities as diamonds beside the regions, with
what users near the city see in the hover text; choosing "real users" in the map's selector leaves the
cities alone and puts the choice in the URL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "real-users-are-diamonds-14"
TRACES_JS = """() => {
  const m = document.getElementById('map');
  if (!m || !Array.isArray(m.data) || !m.querySelector('.scattergeo .point')) return null;
  const out = {};
  for (const t of m.data) {
    if (t.meta && t.meta.role) out[t.meta.role] = {text: t.text || [], symbol: t.marker && t.marker.symbol};
  }
  return out;
}"""


@pytest.fixture
def world(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import IngestSourceFactory, MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory
    from tests.realusers_pages.support import LAGOS, calls

    Region.objects.all().delete()
    oslo = RegionFactory(slug="ru-oslo", name="Oslo", latitude=59.9, longitude=10.7)
    probe = ProbeFactory(regions=[oslo])
    now = datetime.now(UTC)
    for i in range(4):
        MeasurementFactory(probe=probe, region=oslo, scheduled_for=now - timedelta(minutes=3 + i))
    WorkerFactory(region=oslo, last_seen=now + timedelta(minutes=5))
    calls(IngestSourceFactory().id, 6, now - timedelta(minutes=20), LAGOS, host="llm.internal", ttft_ms=1900.0)
    get_user_model().objects.create_user("realwatcher", "r@example.com", PASSWORD)


def test_the_map_draws_real_users_beside_the_regions_and_alone(world, asgi_server, browser_page):
    page = browser_page
    login(page, asgi_server.origin, "realwatcher", PASSWORD)
    page.goto(f"{asgi_server.origin}/")
    page.wait_for_function(TRACES_JS, timeout=30_000)
    traces = page.evaluate(TRACES_JS)
    assert traces["real-users"]["symbol"] == "diamond", traces
    assert traces["real-users"]["text"][0].startswith("your users near Lagos: p50 TTFT 1.9 s"), traces
    assert "regions" in traces

    page.select_option('select[name="layer"]', "real")
    page.wait_for_function(
        f"() => {{ const t = ({TRACES_JS})(); return t && !t.regions && !!t['real-users']; }}", timeout=30_000
    )
    assert "layer=real" in page.url
