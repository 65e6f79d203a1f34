"""With one target there is nothing to choose a map colour for: the overview's map sits directly under its
controls (the map's heading and its layer choice), with no empty row of a target picker, a "coloured for" line
or a title band between them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "one-target-no-empty-band-47"
MAP_DRAWN_JS = """() => {
  const m = document.getElementById('map');
  return !!(m && Array.isArray(m.data) && m.querySelector('.scattergeo .point'));
}"""
# Between the bottom of the last visible control above the map and the map's top: the band in pixels.
GAP_JS = """() => {
  const map = document.getElementById('map');
  const card = map.closest('figure');
  const above = Array.from(card.children).filter((el) => {
    if (el === map) return false;
    if (!(el.compareDocumentPosition(map) & Node.DOCUMENT_POSITION_FOLLOWING)) return false;
    const box = el.getBoundingClientRect();
    return box.height > 0 && getComputedStyle(el).display !== 'none';
  });
  const bottom = Math.max(...above.map((el) => el.getBoundingClientRect().bottom));
  return {
    gap: map.getBoundingClientRect().top - bottom,
    above: above.map((el) => el.id || el.className || el.tagName),
    choiceShown: !document.getElementById('map-target-choice').hidden,
  };
}"""


@pytest.fixture
def one_target(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory

    Region.objects.all().delete()
    oslo = RegionFactory(slug="band-oslo", name="Oslo", latitude=59.9, longitude=10.7)
    probe = ProbeFactory(regions=[oslo])
    now = datetime.now(UTC)
    for i in range(4):
        MeasurementFactory(probe=probe, region=oslo, scheduled_for=now - timedelta(minutes=3 + i))
    WorkerFactory(region=oslo, last_seen=now + timedelta(minutes=5))
    get_user_model().objects.create_user("bandwatcher", "b@example.com", PASSWORD)


def test_with_one_target_the_map_is_directly_under_its_controls(one_target, asgi_server, browser_page):
    page = browser_page
    login(page, asgi_server.origin, "bandwatcher", PASSWORD)
    page.goto(f"{asgi_server.origin}/")
    page.wait_for_function(MAP_DRAWN_JS, timeout=30_000)
    page.wait_for_load_state("networkidle")
    found = page.evaluate(GAP_JS)
    assert not found["choiceShown"], found
    # A control's own margin, not a row: under a line of text.
    assert 0 <= found["gap"] < 12, found
    # Not even before the script runs: the page comes without the choice.
    served = page.request.get(f"{asgi_server.origin}/").text()
    assert re.search(r'<span class="chart-option" id="map-target-choice" hidden>', served), "choice served shown"
