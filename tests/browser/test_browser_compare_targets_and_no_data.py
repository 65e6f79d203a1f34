"""In headless Chromium: two targets compared by ticking them in the filter's
target picker (no URL editing), and a metric with no data (TLS over plain
HTTP) said in words in place of the charts, then the charts back when a
metric with data is chosen. Screenshots land in test-artifacts/."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "compare-two-targets-please-77"
PLAIN = "No TLS: these targets use plain HTTP, so there is no TLS handshake to measure."
TABLE_TARGETS_JS = """() => {
  const table = document.querySelector('#region-target-table');
  const keys = Array.from(table.tHead.rows[0].cells).map(th => th.dataset.key);
  const col = keys.indexOf('target');
  return Array.from(table.tBodies[0].rows).map(tr => tr.cells[col] ? tr.cells[col].textContent.trim() : '');
}"""
MAP_DRAWN_JS = "() => !!document.querySelector('#map .scattergeo .point')"


@pytest.fixture
def three_targets(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, TargetFactory

    Region.objects.all().delete()
    regions = [
        RegionFactory(slug="cmp-oslo", name="Oslo", latitude=59.9, longitude=10.7),
        RegionFactory(slug="cmp-lima", name="Lima", latitude=-12.0, longitude=-77.0),
    ]
    now = datetime.now(UTC)
    targets = {}
    for name in ("Alpha API", "Beta API", "Gamma API"):
        target = TargetFactory(name=name, url="http://127.0.0.1:9/v1/chat/completions")
        probe = ProbeFactory(target=target, regions=regions)
        for region in regions:
            for i in range(4):
                MeasurementFactory(
                    probe=probe, region=region, scheduled_for=now - timedelta(minutes=3 + i), tls_ms=None
                )
        targets[name] = target
    get_user_model().objects.create_user("comparer", "c@example.com", PASSWORD)
    return targets


def test_two_targets_are_compared_from_the_picker_and_a_metric_without_data_says_why(
    three_targets, asgi_server, browser_page
):
    page = browser_page
    origin = asgi_server.origin
    login(page, origin, "comparer", PASSWORD)
    page.goto(f"{origin}/")
    page.wait_for_function(MAP_DRAWN_JS, timeout=20_000)

    # 1. Compare: open the picker, tick two targets; the page follows without a reload.
    page.click("#target-picker summary")
    page.get_by_label("Alpha API").check()
    page.get_by_label("Gamma API").check()
    assert not page.get_by_label("All targets").is_checked(), "ticking a target leaves 'All targets' ticked"
    alpha, gamma = three_targets["Alpha API"].id, three_targets["Gamma API"].id
    page.wait_for_function(
        "([a, g]) => { const t = new URLSearchParams(location.search).getAll('target');"
        " return t.length === 2 && t.includes(String(a)) && t.includes(String(g)); }",
        arg=[alpha, gamma],
    )
    page.wait_for_function(
        f"() => {{ const t = ({TABLE_TARGETS_JS})(); return t.length === 4"
        " && t.every(n => n === 'Alpha API' || n === 'Gamma API'); }"
    )
    assert page.inner_text("#target-summary") == "Alpha API, Gamma API"
    snap(page, "compare")
    # Ticking "All targets" clears the others.
    page.get_by_label("All targets").check()
    page.wait_for_function("() => !new URLSearchParams(location.search).getAll('target').some(t => t !== 'all')")
    assert not page.get_by_label("Alpha API").is_checked()
    page.wait_for_function(f"() => ({TABLE_TARGETS_JS})().length === 6")
    page.keyboard.press("Escape")
    page.click("h2")  # outside the picker: it closes

    # 2. TLS over plain-HTTP targets: the reason instead of empty charts.
    page.select_option("select[name=metric]", "tls")
    for chart in ("map", "histograms", "timeseries"):
        note = page.locator(f'[data-no-data="{chart}"]')
        note.wait_for(state="visible")
        assert note.inner_text() == PLAIN, chart
        assert page.locator(f"#{chart}").is_hidden(), chart
    assert page.locator("#map-legend").is_hidden()
    assert page.locator('[data-no-data="region-target-table"]').inner_text() == PLAIN
    snap(page, "no-tls")

    # 3. Back to a metric with data: the charts return, drawn at their size.
    page.select_option("select[name=metric]", "ttft")
    page.wait_for_function(MAP_DRAWN_JS)
    assert page.locator('[data-no-data="map"]').is_hidden()
    box = page.locator("#map").bounding_box()
    assert box and box["width"] > 400 and box["height"] > 150, box
    assert page.recorder.page_errors == [], page.recorder.page_errors
