"""At 15 regions x 6 targets, the overview's distribution and time-series charts, as drawn in headless Chromium:
every region appears by its name (never its slug), the distribution's axis labels do not overlap, and no colour
stands for two regions in one chart. With a few regions chosen the time series becomes one line per region,
and the "Show as" choice beside it switches back to the heatmap through the URL. The six targets are pooled
(pool=on, issue 47): these are the figures per region; kept apart, they are per target x region (see
test_browser_two_very_different_targets_are_never_pooled.py).

The site runs on a real uvicorn over the test database (tests.browser.asgi_server); the rows are made with the
factories and committed (transactional_db). Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import ARTIFACTS, artifact_name, snap

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-15"
# A name that is markup if not escaped: it must show as typed.
TRICKY = "Lab <i>7</i> & co"
CITIES = [
    "Lagos", "London", "Tokyo", "Sydney", "São Paulo", "Mumbai", "Frankfurt", "Virginia",
    "Singapore", "Johannesburg", "Seoul", "Toronto", "Paris", "Stockholm", TRICKY,
]  # fmt: skip
CHOSEN = CITIES[:6]

# What a Plotly div drew: its traces (as Plotly filled them in), tick labels and legend entries, as text.
DRAWN_JS = """(id) => {
  const el = document.getElementById(id);
  if (!el || !Array.isArray(el._fullData) || !el.querySelector('svg.main-svg')) return null;
  const texts = (sel) => Array.from(el.querySelectorAll(sel)).map((t) => t.textContent);
  const boxes = (sel) => Array.from(el.querySelectorAll(sel)).map((t) => {
    const r = t.getBoundingClientRect();
    return [r.left, r.right, r.top, r.bottom];
  });
  return {
    traces: el._fullData.map((t) => ({
      type: t.type, name: t.name, y: Array.from(t.y || []), median: Array.from(t.median || []),
      line: t.line ? t.line.color : null, marker: t.marker ? t.marker.color : null, fill: t.fillcolor || null,
    })),
    yticks: texts('.ytick text'),
    yticksTopDown: Array.from(el.querySelectorAll('.ytick text'))
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top).map((t) => t.textContent),
    xticks: texts('.xtick text'),
    xtickBoxes: boxes('.xtick text'),
    legend: texts('.legendtext'),
    cells: el.querySelectorAll('.hm image').length,
    search: location.search,
  };
}"""


def slug(city: str) -> str:
    return "b15-" + "".join(c for c in city.lower() if c.isascii() and c.isalnum())


@pytest.fixture
def fifteen_regions(transactional_db):
    """A user, 15 regions (one named like markup) and 6 targets, each measured from every region in the last hour."""
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import ProbeFactory, RegionFactory, TargetFactory, spread_measurements

    # Exactly these regions: the seeded ones would add rows of their own.
    Region.objects.all().delete()
    regions = [
        RegionFactory(slug=slug(city), name=city, city=city, latitude=-40 + 5 * i, longitude=-150 + 20 * i)
        for i, city in enumerate(CITIES)
    ]
    now = datetime.now(UTC)
    for t in range(6):
        probe = ProbeFactory(target=TargetFactory(name=f"Target {t + 1}"), regions=regions)
        for i, region in enumerate(regions):
            spread_measurements(
                probe, region, now - timedelta(minutes=55), now - timedelta(minutes=1), 27,
                seed=100 * t + i, median=150.0 * 1.2**i,
            )  # fmt: skip
    get_user_model().objects.create_user("fifteen", "fifteen@example.com", PASSWORD)
    return regions


def drawn(page, chart_id: str, ready: str) -> dict:
    """The chart's drawing once `ready` (a JS condition on `d`, the DRAWN_JS result) holds."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            f"() => {{ const d = ({DRAWN_JS})({chart_id!r}); return !!d && ({ready}); }}", timeout=20_000
        )
    except PlaywrightTimeout:
        pytest.fail(f"#{chart_id} never met {ready}; it drew {page.evaluate(DRAWN_JS, chart_id)}")
    return page.evaluate(DRAWN_JS, chart_id)


def snap_chart(page, chart_id: str, label: str) -> None:
    """The chart's card alone, beside snap()'s whole page: test-artifacts/<test name>-<label>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{page.artifact_name}-{artifact_name(label)}.png"
    page.locator(f".card:has(#{chart_id})").screenshot(path=str(path))


def region_colours(chart: dict) -> dict[str, str]:
    return {t["name"]: t["line"] for t in chart["traces"] if t["type"] == "scatter"}


def test_every_region_is_named_and_no_colour_stands_for_two_regions(fifteen_regions, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    login(page, origin, "fifteen", PASSWORD)

    # 1. All 15 regions: the distribution is a box row per region, named on its axis, in one colour.
    page.goto(f"{origin}/?window=1h&percentile=p95&pool=on")
    dist = drawn(page, "histograms", "d.yticks.length >= 15")
    assert sorted(dist["yticks"]) == sorted(CITIES), dist["yticks"]
    assert not [s for s in dist["yticks"] if s.startswith("b15-")], "a slug where a name belongs"
    boxes = [t for t in dist["traces"] if t["type"] == "box"]
    # In the data names are escaped text (Plotly reads markup in labels); drawn, they read as typed.
    assert len(boxes) == 1 and sorted(boxes[0]["y"]) == sorted(html.escape(c, quote=False) for c in CITIES)
    assert "p95 (selected percentile)" in dist["legend"]
    # No legend entry per region, so no colour to match against one: rows are told apart by name.
    assert not set(dist["legend"]) & set(CITIES), dist["legend"]
    # Sorted by median, fastest at the top (the first row, drawn first).
    assert boxes[0]["median"] == sorted(boxes[0]["median"]), boxes
    assert [html.escape(t, quote=False) for t in dist["yticksTopDown"]] == boxes[0]["y"], dist
    # Unit-labelled ticks that do not overlap.
    assert dist["xticks"] and all(t.endswith((" ms", " s")) for t in dist["xticks"]), dist["xticks"]
    spans = sorted(dist["xtickBoxes"])
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), f"x tick labels overlap: {spans}"

    # The time series: a heatmap with a row per region name.
    heat = drawn(page, "timeseries", "d.yticks.length >= 15")
    assert [t["type"] for t in heat["traces"]] == ["heatmap"] and heat["cells"], heat
    assert sorted(heat["yticks"]) == sorted(CITIES), heat["yticks"]
    snap(page, "fifteen-regions")
    snap_chart(page, "histograms", "distribution-15")
    snap_chart(page, "timeseries", "heatmap-15")

    # 2. Six regions chosen: one line each, in six different colours, named in the legend.
    query = "&".join(f"region={slug(city)}" for city in CHOSEN)
    page.goto(f"{origin}/?window=1h&percentile=p95&pool=on&{query}")
    lines = drawn(page, "timeseries", "d.traces.length === 6 && d.legend.length === 6")
    colours = region_colours(lines)
    assert sorted(colours) == sorted(CHOSEN) and sorted(lines["legend"]) == sorted(CHOSEN), lines
    assert len(set(colours.values())) == len(CHOSEN), f"two regions share a colour: {colours}"
    snap(page, "six-regions-as-lines")
    snap_chart(page, "timeseries", "lines-6")

    # 3. The choice beside the chart switches back to the heatmap, and the URL keeps it.
    page.select_option("select[name=over_time]", "heatmap")
    again = drawn(page, "timeseries", "d.traces.length === 1 && d.traces[0].type === 'heatmap'")
    assert sorted(again["yticks"]) == sorted(CHOSEN)
    assert "over_time=heatmap" in again["search"]
    assert page.recorder.page_errors == [], page.recorder.page_errors


def test_regions_ticked_on_the_page_narrow_the_charts_and_draw_as_lines(fifteen_regions, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    login(page, origin, "fifteen", PASSWORD)
    page.goto(f"{origin}/?window=1h&percentile=p50&pool=on")
    drawn(page, "timeseries", "d.traces.length === 1 && d.traces[0].type === 'heatmap'")

    # The region picker: a dropdown of checkboxes, as the target picker.
    page.click("#region-picker summary")
    for city in CHOSEN[:3]:
        page.check(f'#region-picker input[name="region"][value="{slug(city)}"]')
    lines = drawn(page, "timeseries", "d.traces.length === 3 && d.legend.length === 3")
    assert sorted(lines["legend"]) == sorted(CHOSEN[:3]), lines
    assert len(set(region_colours(lines).values())) == 3
    dist = drawn(page, "histograms", "d.yticks.length === 3")
    assert sorted(dist["yticks"]) == sorted(CHOSEN[:3]), dist
    # The choice is in the URL (a shareable view) and in the picker's summary.
    assert all(f"region={slug(city)}" in lines["search"] for city in CHOSEN[:3]), lines["search"]
    summary = page.text_content("#region-summary")
    assert all(city in summary for city in CHOSEN[:3]), summary

    # Unticking them all is every region again: the heatmap of fifteen rows.
    for city in CHOSEN[:3]:
        page.uncheck(f'#region-picker input[name="region"][value="{slug(city)}"]')
    heat = drawn(page, "timeseries", "d.traces[0].type === 'heatmap' && d.yticks.length >= 15")
    assert "region=" not in heat["search"]
    assert page.recorder.page_errors == [], page.recorder.page_errors
