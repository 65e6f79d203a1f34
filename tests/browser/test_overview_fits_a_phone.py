"""On a phone (390 px wide) no page scrolls sideways: the overview, a region, a target and the login page are
no wider than the screen, every chart and its legend is drawn inside it, and a table wider than the screen
scrolls inside its own box (which takes keyboard focus and has a name), not the page; a legend moved under a
chart leaves the plot its height."""

from __future__ import annotations

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.pages import PASSWORD, USERNAME, Page, make_site, open_page

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PHONE = {"width": 390, "height": 844}
# A legend moved under a chart must not squeeze the plot itself into a strip.
MIN_PLOT_AREA_PX = 150

PAGE_WIDTH_JS = "() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})"
# Every drawn chart's SVG and legend, by their boxes on the page.
CHART_BOXES_JS = """() => Array.from(document.querySelectorAll('.plot')).map((plot) => {
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right};
  };
  const area = plot.querySelector('.nsewdrag');  // a cartesian chart's plotting area
  return {
    id: plot.id, svg: box(plot.querySelector('svg.main-svg')), legend: box(plot.querySelector('.legend')),
    areaHeight: area ? area.getBoundingClientRect().height : null,
  };
})"""
# Every table: is it inside a box that scrolls, and does that box overflow?
TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map((table) => {
  const box = table.closest('.table-scroll');
  if (!box) return {id: table.id, box: false};
  const r = box.getBoundingClientRect();
  const overflows = box.scrollWidth > box.clientWidth;
  box.scrollLeft = 40;
  return {
    id: table.id, box: true, left: r.left, right: r.right, overflows, scrolled: box.scrollLeft > 0,
    overflowX: getComputedStyle(box).overflowX, tabindex: box.getAttribute('tabindex'),
    named: !!(box.getAttribute('aria-label') || box.getAttribute('aria-labelledby')),
  };
})"""


@pytest.fixture
def site_pages(transactional_db):
    return make_site()


def problems_on(page, name: str) -> list[str]:
    found = []
    width = page.evaluate(PAGE_WIDTH_JS)
    if width["scroll"] > width["inner"]:
        found.append(f"{name}: the page is {width['scroll']} px wide on a {width['inner']} px screen")
    for chart in page.evaluate(CHART_BOXES_JS):
        for part in ("svg", "legend"):
            box = chart[part]
            if box and (box["left"] < 0 or box["right"] > width["inner"] + 0.5):
                found.append(f"{name}: #{chart['id']} {part} spans {box['left']:.0f}–{box['right']:.0f} px")
        if chart["areaHeight"] is not None and chart["areaHeight"] < MIN_PLOT_AREA_PX:
            found.append(
                f"{name}: #{chart['id']} keeps only {chart['areaHeight']:.0f} px to plot in (legend too tall?)"
            )
    for table in page.evaluate(TABLES_JS):
        if not table["box"]:
            found.append(f"{name}: table #{table['id']} is not inside a scrolling box")
            continue
        if table["right"] > width["inner"] + 0.5:
            found.append(f"{name}: the box of table #{table['id']} ends at {table['right']:.0f} px")
        if table["overflowX"] not in ("auto", "scroll") or table["tabindex"] != "0" or not table["named"]:
            found.append(f"{name}: the box of table #{table['id']} cannot be scrolled by keyboard or has no name")
        if table["overflows"] and not table["scrolled"]:
            found.append(f"{name}: table #{table['id']} overflows its box but the box does not scroll")
    return found


def test_no_page_is_wider_than_a_phone(site_pages, asgi_server, browser_page):
    page = browser_page
    page.set_viewport_size(PHONE)
    origin = asgi_server.origin
    found = []

    open_page(page, origin, Page("login", "/accounts/login/"))
    found += problems_on(page, "login")
    login(page, origin, USERNAME, PASSWORD)
    overflowing_tables = 0
    for site_page in site_pages:
        if site_page.name == "admin index":
            continue  # Django's own admin styles, with its own responsive stylesheet
        open_page(page, origin, site_page)
        snap(page, site_page.name)
        found += problems_on(page, site_page.name)
        overflowing_tables += sum(t["overflows"] for t in page.evaluate(TABLES_JS) if t["box"])
        if site_page.name == "overview":
            drawn = [c["id"] for c in page.evaluate(CHART_BOXES_JS) if c["svg"]]
            assert drawn == ["map", "histograms", "timeseries", "phases"], drawn

    assert not found, "\n".join(found)
    # The target page's measurements (nine columns) cannot fit 390 px: the box scrolling was really tried.
    assert overflowing_tables >= 1
