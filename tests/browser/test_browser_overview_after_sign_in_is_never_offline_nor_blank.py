"""Right after signing in, the overview never says "offline" while its live socket is still connecting, and its
map box is never empty without a word: it says it is loading until the map draws.

An init script installs a MutationObserver before the page's first byte, recording every text the live
indicator had and every moment the map box was shown with neither a drawing nor its loading note."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "never-offline-when-connecting-47"
WATCH = """
window.__seen = {indicator: [], classes: [], emptyMap: [], looked: 0};
(function () {
  function check() {
    const parsing = document.readyState === 'loading';
    const indicator = document.getElementById('live-indicator');
    // While the parser is inside an element its text may not be there yet: judged once it is complete.
    if (indicator && !(parsing && !indicator.nextSibling)) {
      const text = indicator.textContent.trim();
      const seen = window.__seen.indicator;
      if (text && seen[seen.length - 1] !== text) seen.push(text);
      const cls = indicator.className;
      if (window.__seen.classes[window.__seen.classes.length - 1] !== cls) window.__seen.classes.push(cls);
    }
    const map = document.getElementById('map');
    if (map && !map.hidden && !(parsing && !map.nextElementSibling)) {
      window.__seen.looked += 1;
      const note = map.querySelector('.plot-loading');
      const labelled = !!note && note.textContent.trim() !== '';
      const drawn = !!map.querySelector('svg.main-svg');
      if (!labelled && !drawn) window.__seen.emptyMap.push(map.innerHTML.slice(0, 200));
    }
  }
  new MutationObserver(check).observe(document, {subtree: true, childList: true, characterData: true,
                                                 attributes: true});
})();
"""
SETTLED_JS = """() => {
  const live = document.getElementById('live-indicator');
  const map = document.getElementById('map');
  return !!live && live.classList.contains('on') && !!map && !!map.querySelector('.scattergeo .point')
    && !map.querySelector('.plot-loading');
}"""


@pytest.fixture
def measured(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory

    Region.objects.all().delete()
    lima = RegionFactory(slug="signin-lima", name="Lima", latitude=-12.0, longitude=-77.0)
    probe = ProbeFactory(regions=[lima])
    now = datetime.now(UTC)
    for i in range(4):
        MeasurementFactory(probe=probe, region=lima, scheduled_for=now - timedelta(minutes=3 + i))
    WorkerFactory(region=lima, last_seen=now + timedelta(minutes=5))
    get_user_model().objects.create_user("newcomer", "n@example.com", PASSWORD)


def test_after_sign_in_the_indicator_says_connecting_then_live_and_the_map_is_never_blank(
    measured, asgi_server, browser_page
):
    page = browser_page
    page.context.add_init_script(WATCH)
    login(page, asgi_server.origin, "newcomer", PASSWORD)
    if page.url.rstrip("/") != asgi_server.origin:
        page.goto(f"{asgi_server.origin}/")
    page.wait_for_function(SETTLED_JS, timeout=30_000)
    seen = page.evaluate("() => window.__seen")
    assert seen["indicator"][0] == "connecting…", seen
    assert seen["indicator"][-1] == "live", seen
    assert not any("offline" in text for text in seen["indicator"]), seen
    assert "live off" not in seen["classes"], seen
    assert seen["looked"] > 0 and seen["emptyMap"] == [], seen


def test_the_first_map_comes_with_the_page_without_waiting_for_the_api(measured, asgi_server, browser_page):
    page = browser_page
    asked = []

    def refuse(route):
        asked.append(route.request.url)
        route.abort()

    # Refused: the map can only draw from the figure the page brought.
    page.route("**/api/overview*", refuse)
    login(page, asgi_server.origin, "newcomer", PASSWORD)
    if page.url.rstrip("/") != asgi_server.origin:
        page.goto(f"{asgi_server.origin}/")
    page.wait_for_function(
        """() => { const m = document.getElementById('map');
                   return !!m && !!m.querySelector('.scattergeo .point') && !m.querySelector('.plot-loading'); }""",
        timeout=30_000,
    )
    slugs = page.evaluate("() => document.getElementById('map').data.flatMap((t) => t.customdata || [])")
    assert "signin-lima" in slugs
    assert asked == [], "the first refresh asked for the map the page already had"
