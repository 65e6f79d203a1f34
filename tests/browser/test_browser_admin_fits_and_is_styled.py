"""The admin at 1440 px, as the demo shows it: the demo banner is styled by our stylesheet, the measurement
list shows its columns without a horizontal scroll, and the probe form's region picker carries no
"Hold down Control" hint."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
    pytest.mark.asgi_env(LATENCY_EMULATED_GEOGRAPHY="true"),
]

PASSWORD = "correct-horse-battery-staple-77"
WIDE = {"width": 1440, "height": 900}

TABLE_FITS_JS = """() => {
  const table = document.getElementById('result_list');
  const box = table.closest('.results');
  const cells = Array.from(table.querySelectorAll('thead th'));
  return {
    table: table.scrollWidth, box: box.clientWidth, viewport: document.documentElement.clientWidth,
    page: document.documentElement.scrollWidth,
    columns: cells.map((th) => [th.textContent.trim(), Math.round(th.getBoundingClientRect().right)]),
  };
}"""


@pytest.fixture
def demo_site(transactional_db):
    """The demo's regions and targets, and a measurement from each region with its longest names."""
    from django.contrib.auth import get_user_model

    from devtools.demo_seed import seed
    from probes.models import Region
    from tests.factories import MeasurementFactory

    shipped = importlib.import_module("probes.migrations.0002_seed_regions").REGIONS
    for slug, name, city, country, lat, lon in shipped:
        Region.objects.get_or_create(
            slug=slug, defaults={"name": name, "city": city, "country": country, "latitude": lat, "longitude": lon}
        )
    regions = list(Region.objects.order_by("id"))
    probes = seed("http://127.0.0.1:9", regions)
    now = datetime.now(UTC)
    outcomes = ["ok", "protocol_error", "upstream_error", "ok"]
    for i, region in enumerate(regions):
        for j, probe in enumerate(probes):
            MeasurementFactory(
                probe=probe,
                region=region,
                scheduled_for=now - timedelta(seconds=10 * (i * len(probes) + j)),
                outcome=outcomes[(i + j) % len(outcomes)],
                ttfb_ms=12345.678,
                ttft_ms=23456.789,
                total_ms=34567.891,
                tokens_per_s=226193.4,
                http_status=200,
            )
    get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)
    return {"probe": probes[0]}


def test_the_admin_fits_1440_px_and_styles_the_demo_banner(demo_site, asgi_server, browser_page):
    page = browser_page
    page.set_viewport_size(WIDE)
    origin = asgi_server.origin
    login(page, origin, "boss", PASSWORD)

    page.goto(f"{origin}/admin/probes/measurement/")
    banner = page.locator(".banner.demo")
    assert banner.is_visible()
    style = banner.evaluate("(el) => { const s = getComputedStyle(el); return [s.backgroundColor, s.textAlign]; }")
    assert style == ["rgb(255, 244, 206)", "center"], style
    fit = page.evaluate(TABLE_FITS_JS)
    snap(page, "measurements-1440")
    columns = [name.lower() for name, _right in fit["columns"]]
    for wanted in ("started (utc)", "region", "target", "outcome", "ttfb (ms)", "ttft (ms)", "total (ms)", "http"):
        assert wanted in columns, columns
    assert fit["table"] <= fit["box"], fit
    assert all(right <= fit["viewport"] for _name, right in fit["columns"]), fit
    assert fit["page"] <= fit["viewport"], fit

    page.goto(f"{origin}/admin/probes/probe/{demo_site['probe'].id}/change/")
    form = page.locator("#probe_form")
    assert "Hold down" not in form.inner_text()
    # The picker needs no modifier key: a click on a region's box adds it.
    boxes = page.locator("input[name=regions]")
    assert boxes.count() == 15 and boxes.first.get_attribute("type") == "checkbox"
    snap(page, "probe-form")
