"""Dark mode in headless Chromium: with the system's colour scheme dark the page and its charts are dark (the
page's background, a chart's paper_bgcolor, the world map's land), and they follow the system when it changes
while the page is open; the header's toggle switches to light, the charts redraw light, and the choice is
remembered after a reload, in force from the page's first paint (the body's colour as the parser creates it,
before any script of the page's body ran)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "dark-mode-follows-the-system-47"
FIRST_PAINT = """
window.__firstBody = null;
new MutationObserver((records, observer) => {
  if (!document.body) return;
  window.__firstBody = getComputedStyle(document.body).backgroundColor;
  observer.disconnect();
}).observe(document, {childList: true, subtree: true});
"""
DRAWN_JS = """() => ['map', 'histograms'].every((id) => {
  const el = document.getElementById(id);
  return !!el && !!el._fullLayout && !!el.querySelector('svg.main-svg');
})"""
LOOK_JS = """() => {
  const map = document.getElementById('map');
  const hist = document.getElementById('histograms');
  return {
    theme: document.documentElement.dataset.theme,
    body: getComputedStyle(document.body).backgroundColor,
    mapPaper: map._fullLayout.paper_bgcolor,
    land: map._fullLayout.geo.landcolor,
    histPaper: hist._fullLayout.paper_bgcolor,
    font: hist._fullLayout.font.color,
    choice: document.getElementById('theme-choice').value,
  };
}"""

PAPER_IS_NOT_JS = "(colour) => document.getElementById('map')._fullLayout.paper_bgcolor !== colour"


def lightness(css: str) -> float:
    """0 (black) to 1 (white) from "rgb(r, g, b)", "#rrggbb" or "white"."""
    css = css.strip().lower()
    if css == "white":
        return 1.0
    if css.startswith("#"):
        channels = [int(css[i : i + 2], 16) for i in (1, 3, 5)]
    else:
        channels = [float(x) for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    return sum(channels) / (3 * 255)


@pytest.fixture
def two_targets(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, WorkerFactory

    Region.objects.all().delete()
    regions = [
        RegionFactory(slug="dm-oslo", name="Oslo", latitude=59.9, longitude=10.7),
        RegionFactory(slug="dm-lima", name="Lima", latitude=-12.0, longitude=-77.0),
    ]
    now = datetime.now(UTC)
    for probe in (ProbeFactory(regions=regions), ProbeFactory(regions=regions)):
        for region in regions:
            for i in range(6):
                MeasurementFactory(probe=probe, region=region, scheduled_for=now - timedelta(minutes=3 + i),
                                   ttft_ms=150.0 + 20 * i)  # fmt: skip
    for region in regions:
        WorkerFactory(region=region, last_seen=now + timedelta(minutes=5))
    get_user_model().objects.create_user("nightowl", "o@example.com", PASSWORD)


def look(page) -> dict:
    page.wait_for_function(DRAWN_JS, timeout=30_000)
    return page.evaluate(LOOK_JS)


def test_dark_follows_the_system_and_the_toggle_switches_to_light_and_is_remembered(
    two_targets, asgi_server, browser_page
):
    page = browser_page
    page.context.add_init_script(FIRST_PAINT)
    page.emulate_media(color_scheme="dark")
    login(page, asgi_server.origin, "nightowl", PASSWORD)
    page.goto(f"{asgi_server.origin}/")

    dark = look(page)
    assert dark["theme"] == "auto" and dark["choice"] == "auto", dark
    for key in ("body", "mapPaper", "histPaper", "land"):
        assert lightness(dark[key]) < 0.25, (key, dark)
    assert lightness(dark["font"]) > 0.7, dark

    # "As the system" follows the system while the page is open: the charts are redrawn, not only the page.
    page.emulate_media(color_scheme="light")
    page.wait_for_function(PAPER_IS_NOT_JS, arg=dark["mapPaper"])
    following = look(page)
    assert lightness(following["body"]) > 0.85 and lightness(following["mapPaper"]) > 0.85, following
    page.emulate_media(color_scheme="dark")
    page.wait_for_function(PAPER_IS_NOT_JS, arg=following["mapPaper"])

    page.select_option("#theme-choice", "light")
    page.wait_for_function(PAPER_IS_NOT_JS, arg=dark["mapPaper"])
    light = look(page)
    assert light["theme"] == "light", light
    for key in ("body", "mapPaper", "histPaper", "land"):
        assert lightness(light[key]) > 0.85, (key, light)

    page.reload()
    again = look(page)
    assert again["theme"] == "light" and again["choice"] == "light", again
    assert lightness(page.evaluate("() => window.__firstBody")) > 0.85
    assert lightness(again["mapPaper"]) > 0.85, again


def test_a_dark_choice_holds_on_a_light_system_from_the_first_paint(two_targets, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(FIRST_PAINT)
    page.emulate_media(color_scheme="light")
    login(page, asgi_server.origin, "nightowl", PASSWORD)
    page.goto(f"{asgi_server.origin}/")
    assert lightness(look(page)["body"]) > 0.85
    page.select_option("#theme-choice", "dark")
    page.reload()
    after = look(page)
    assert after["theme"] == "dark", after
    assert lightness(page.evaluate("() => window.__firstBody")) < 0.25
    assert lightness(after["mapPaper"]) < 0.25, after
