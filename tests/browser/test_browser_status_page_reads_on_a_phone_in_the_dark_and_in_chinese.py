"""A public status page in Chromium, signed out: on a phone (390 px) nothing scrolls sideways and the 90 uptime bars
are all drawn inside the screen; with the system's colour scheme dark the page is dark; a page set to Chinese
reads in Chinese; the page runs no script, so it reads the same without JavaScript; and axe-core finds no serious
or critical violation on it, wide or on a phone, light or dark (tests/browser/test_pages_have_no_serious_...)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Measurement
from tests.browser.conftest import snap
from tests.browser.test_browser_dark_mode_follows_the_system_and_the_toggle import lightness
from tests.browser.test_pages_have_no_serious_accessibility_violations import serious_violations
from tests.factories import (
    MeasurementFactory,
    ProbeFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    SLOHourCountFactory,
    StatusPageFactory,
    TargetFactory,
)
from tests.slos_pages.conftest import counted

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PHONE = {"width": 390, "height": 844}
LOOK_JS = """() => {
  const bars = Array.from(document.querySelectorAll('.uptime-bars .bar')).map((b) => b.getBoundingClientRect());
  return {
    scroll: document.documentElement.scrollWidth, inner: window.innerWidth, scripts: document.scripts.length,
    bars: bars.length, barsInside: bars.every((r) => r.width > 0 && r.left >= 0 && r.right <= window.innerWidth),
    body: getComputedStyle(document.body).backgroundColor, lang: document.documentElement.lang,
    overall: document.getElementById('status-overall').textContent.trim(),
  };
}"""


@pytest.fixture
def status_page(transactional_db):
    regions = [RegionFactory(slug="zz-lagos", name="Lagos"), RegionFactory(slug="zz-oslo", name="Oslo")]
    target = TargetFactory(name="chat-eu")
    probe = ProbeFactory(target=target, regions=regions)
    objective = counted(ServiceLevelObjectiveFactory(targets=[target]), since=datetime.now(UTC) - timedelta(days=120))
    now = datetime.now(UTC)
    rows = [{"scheduled_for": now - timedelta(minutes=2 * i), "region_id": regions[i % 2].id} for i in range(60)]
    Measurement.objects.bulk_create(MeasurementFactory.build_rows(rows, probe=probe, region=regions[0]))
    hour = now.replace(minute=0, second=0, microsecond=0)
    for days in range(1, 40):
        SLOHourCountFactory(
            objective=objective,
            target=target,
            region=regions[0],
            hour=hour - timedelta(days=days),
            good=100,
            degraded=0,
            bad=0 if days % 9 else 5,
            missed=0,
            excluded=0,
            bad_minutes=0,
        )
    # Made before the browser starts: its event loop then runs in this thread, where the ORM refuses to.
    pages = {}
    for language in ("en", "zh-hans"):
        slug = f"browser-{language}-{uuid.uuid4().hex[:10]}"
        page = StatusPageFactory(slug=slug, title="Acme APIs", language=language, targets=[target], slos=[objective])
        pages[language] = page.slug
    return pages


def test_on_a_phone_in_the_dark(status_page, asgi_server, browser_page):
    page = browser_page
    page.set_viewport_size(PHONE)
    page.emulate_media(color_scheme="dark")
    page.goto(f"{asgi_server.origin}/status/{status_page['en']}/")
    look = page.evaluate(LOOK_JS)
    snap(page, "phone-dark")
    assert look["scroll"] <= look["inner"], look
    assert look["bars"] == 90 and look["barsInside"], look
    assert look["scripts"] == 0
    assert lightness(look["body"]) < 0.3, look["body"]
    assert look["overall"] == "All systems operational"


def test_a_chinese_page_reads_in_chinese(status_page, asgi_server, browser_page):
    page = browser_page
    page.goto(f"{asgi_server.origin}/status/{status_page['zh-hans']}/")
    look = page.evaluate(LOOK_JS)
    assert look["lang"] == "zh-hans"
    assert look["overall"] == "所有系统运行正常"
    assert lightness(look["body"]) > 0.7  # the system's light scheme


def test_axe_finds_nothing_serious_in_either_look(status_page, asgi_server, browser_page):
    page = browser_page
    found = []
    for width in (1440, 390):
        for scheme in ("light", "dark"):
            page.set_viewport_size({"width": width, "height": 900})
            page.emulate_media(color_scheme=scheme)
            for language, slug in status_page.items():
                page.goto(f"{asgi_server.origin}/status/{slug}/")
                found += serious_violations(page, f"status page ({language}) at {width} px, {scheme}")
    assert not found, "axe-core found serious or critical violations:\n" + "\n".join(found)
