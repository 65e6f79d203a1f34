"""In headless Chromium: a fast target (about 30 ms to first token) and a slow one (about 900 ms) on the overview.
With every target in view (the default) and with both ticked in the picker (compare mode), the distribution
shows a group of rows per target, over time a heatmap row per target and region, and the map's hover names the
target it is coloured for; the closed picker names both targets in full. Ticking "pool targets" brings the
pooled figures back. Screenshots land in test-artifacts/."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "never-pool-two-targets-47"
# Plotly keeps the drawn traces on the element: labels as drawn, hover texts as shown.
BOX_ROWS_JS = """() => { const gd = document.getElementById('histograms');
  return (gd && gd.data) ? gd.data.filter(t => t.type === 'box').flatMap(t => Array.from(t.y)) : []; }"""
HEATMAP_ROWS_JS = """() => { const gd = document.getElementById('timeseries');
  const h = (gd && gd.data) ? gd.data.find(t => t.type === 'heatmap') : null; return h ? Array.from(h.y) : []; }"""
MAP_HOVERS_JS = """() => { const gd = document.getElementById('map');
  const m = (gd && gd.data) ? gd.data.find(t => t.meta && t.meta.role === 'regions') : null;
  return m ? Array.from(m.text) : []; }"""
PER_TARGET = ["Fast vLLM · Lima", "Fast vLLM · Tokyo", "Slow hosted · Tokyo"]


@pytest.fixture
def fast_and_slow(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, TargetFactory, WorkerFactory

    Region.objects.all().delete()
    tokyo = RegionFactory(slug="np-tokyo", name="Tokyo", latitude=35.7, longitude=139.7)
    lima = RegionFactory(slug="np-lima", name="Lima", latitude=-12.0, longitude=-77.0)
    for region in (tokyo, lima):
        WorkerFactory(region=region)
    now = datetime.now(UTC)
    targets = {}
    for name, regions, base in (("Fast vLLM", [tokyo, lima], 30.0), ("Slow hosted", [tokyo], 900.0)):
        target = TargetFactory(name=name)
        probe = ProbeFactory(target=target, regions=regions)
        for region in regions:
            for i in range(5):
                MeasurementFactory(
                    probe=probe, region=region, scheduled_for=now - timedelta(minutes=3 + i), ttft_ms=base + i
                )
        targets[name] = target
    get_user_model().objects.create_user("pooler", "p@example.com", PASSWORD)
    return targets


def wait_rows(page, js: str, expected: list[str]) -> None:
    page.wait_for_function(f"(want) => JSON.stringify(({js})()) === JSON.stringify(want)", arg=expected)


def test_two_very_different_targets_are_kept_apart_until_pooled(fast_and_slow, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    login(page, origin, "pooler", PASSWORD)
    page.goto(f"{origin}/")

    # 1. Every target (the default): a group of rows per target, a heatmap row per target x region.
    wait_rows(page, BOX_ROWS_JS, PER_TARGET)
    wait_rows(page, HEATMAP_ROWS_JS, PER_TARGET)
    # The map: coloured for the best-ranked target, named in every region's hover.
    page.wait_for_function(f"() => ({MAP_HOVERS_JS})().length === 2")
    assert all("target: Fast vLLM" in hover for hover in page.evaluate(MAP_HOVERS_JS))
    assert page.inner_text("#map-shows") == "Coloured for Fast vLLM."
    snap(page, "all-targets")
    # The map for the slow target: only Tokyo measures it, and its hover says so.
    page.select_option("select[name=map_target]", str(fast_and_slow["Slow hosted"].id))
    page.wait_for_function(
        f"() => {{ const h = ({MAP_HOVERS_JS})(); return h.length === 1 && h[0].includes('target: Slow hosted'); }}"
    )

    # 2. Compare mode: both ticked in the picker; still per target, and the closed picker names both in full.
    page.click("#target-picker summary")
    page.get_by_label("Fast vLLM").check()
    page.get_by_label("Slow hosted").check()
    page.wait_for_function("() => new URLSearchParams(location.search).getAll('target').length === 2")
    page.click("h2")  # outside the picker: it closes
    assert not page.locator("#target-picker").evaluate("el => el.open")
    summary = page.locator("#target-picker summary")
    assert summary.inner_text() == "Fast vLLM, Slow hosted"
    # Nothing cut off: the summary shows all its text, and its title names both.
    assert summary.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "the picker's summary is cut off"
    assert summary.get_attribute("title") == "Fast vLLM, Slow hosted"
    wait_rows(page, BOX_ROWS_JS, PER_TARGET)
    wait_rows(page, HEATMAP_ROWS_JS, PER_TARGET)
    snap(page, "compare")

    # 3. Pool targets: one row per region, as before, and the map's target choice goes away.
    page.get_by_label("Pool targets").check()
    page.wait_for_function("() => new URLSearchParams(location.search).get('pool') === 'on'")
    page.wait_for_function(f'() => JSON.stringify(({BOX_ROWS_JS})().sort()) === \'["Lima","Tokyo"]\'')
    page.wait_for_function("() => document.getElementById('map-target-choice').hidden")
    snap(page, "pooled")
    assert page.recorder.page_errors == [], page.recorder.page_errors
