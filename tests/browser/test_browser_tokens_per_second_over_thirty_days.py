"""Tokens per second over 30 days, as drawn in headless Chromium: the long window reads rollups, and since the
rollups keep a histogram of tokens/s the page shows the chosen percentile everywhere (map scale, distribution
marker, table column) instead of silently falling back to a mean.

The rows are made with the factories over three weeks and rolled up as the schedule would (rebuild_range); the
site runs on a real uvicorn over the test database (tests.browser.asgi_server).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
    # Each region's worker, heard at the start, keeps it live (coloured, with the scale) however slow the run.
    pytest.mark.asgi_env(LATENCY_REGION_STALE_AFTER="3600", LATENCY_REGION_DARK_AFTER="7200"),
]

PASSWORD = "correct-horse-battery-staple-30"
# Per region, tokens per second drawn uniformly from this range (tests.factories.spread_measurements).
TPS_RANGE = (20.0, 90.0)

PAGE_JS = """() => {
  const plot = (id) => document.getElementById(id);
  const drawn = (id) => !!plot(id) && Array.isArray(plot(id)._fullData) && !!plot(id).querySelector('svg.main-svg');
  const rows = Array.from(document.querySelectorAll('#region-target-table tbody tr'))
    .map((tr) => Array.from(tr.cells).map((td) => td.textContent.trim()));
  if (!['map', 'histograms', 'timeseries'].every(drawn) || !rows.length || rows[0].length < 3) return null;
  const colourbar = plot('map')._fullData.find((t) => t.marker && t.marker.colorbar);
  const boxes = plot('histograms')._fullData.filter((t) => t.type === 'box');
  return {
    headers: Array.from(document.querySelectorAll('#region-target-table thead th')).map((th) => th.textContent.trim()),
    rows,
    colourbar: colourbar ? colourbar.marker.colorbar.title.text : null,
    medians: boxes.length ? Array.from(boxes[0].median) : [],
    legend: Array.from(plot('histograms').querySelectorAll('.legendtext')).map((t) => t.textContent),
    heatmap: plot('timeseries')._fullData.filter((t) => t.type === 'heatmap').length,
    text: document.body.innerText,
  };
}"""


@pytest.fixture
def three_weeks_of_tokens(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from probes.rollups.build import rebuild_range
    from tests.factories import ProbeFactory, RegionFactory, TargetFactory, WorkerFactory, spread_measurements

    Region.objects.all().delete()
    regions = [
        RegionFactory(slug=f"tps-{name.lower()}", name=name, city=name, latitude=lat, longitude=lon)
        for name, lat, lon in (("Lagos", 6.5, 3.4), ("London", 51.5, -0.1), ("Tokyo", 35.7, 139.7))
    ]
    probe = ProbeFactory(target=TargetFactory(name="Streaming target"), regions=regions)
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    start = end - timedelta(days=21)
    for i, region in enumerate(regions):
        spread_measurements(probe, region, start, end, 300, seed=30 + i)
    # The schedule's job, for the whole span: every hour and day rolled up.
    rebuild_range(start, end)
    for region in regions:
        WorkerFactory(region=region)  # without a worker a region is drawn dark, without the colour scale
    get_user_model().objects.create_user("tokens", "tokens@example.com", PASSWORD)
    return regions


def number(cell: str) -> float:
    return float(re.sub(r"[^\d.]", "", cell))


def test_tokens_per_second_has_its_chosen_percentile_everywhere_over_thirty_days(
    three_weeks_of_tokens, asgi_server, browser_page
):
    page = browser_page
    login(page, asgi_server.origin, "tokens", PASSWORD)
    page.goto(f"{asgi_server.origin}/?window=30d&metric=tokens_per_s&percentile=p90")
    page.wait_for_function(f"() => ({PAGE_JS})() !== null", timeout=30_000)
    got = page.evaluate(PAGE_JS)

    # The table: the chosen percentile's column, in tok/s, with a number in every row (no "–").
    assert "p90 (tok/s)" in got["headers"] and "p50 (tok/s)" in got["headers"], got["headers"]
    p90 = got["headers"].index("p90 (tok/s)")
    p50 = got["headers"].index("p50 (tok/s)")
    assert len(got["rows"]) == 3, got["rows"]
    low, high = TPS_RANGE
    for row in got["rows"]:
        assert low * 0.97 <= number(row[p50]) <= number(row[p90]) <= high * 1.03, row

    # The map's scale and the distribution name the percentile; the distribution has a median per region.
    assert got["colourbar"].startswith("p90"), got["colourbar"]
    assert "p90 (selected percentile)" in got["legend"], got["legend"]
    assert len(got["medians"]) == 3 and all(low * 0.97 <= m <= high * 1.03 for m in got["medians"]), got
    assert got["heatmap"] == 1
    # Nowhere a mean standing in for a percentile.
    assert not re.search(r"\bmean\b", got["text"], re.IGNORECASE), got["text"]
    snap(page, "tokens-per-second-30d")
    assert page.recorder.page_errors == [], page.recorder.page_errors
