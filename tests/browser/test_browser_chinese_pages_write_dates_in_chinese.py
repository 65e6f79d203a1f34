"""In headless Chromium, on the Chinese pages: the overview's over-time chart, over a window of several days, labels
its time axis with Chinese dates (Plotly's zh-CN locale, loaded by the page, 月 and 日), and the target page writes
a measurement's start as 年月日 in the browser's zone (Asia/Shanghai, UTC+08:00)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
    pytest.mark.browser_timezone("Asia/Shanghai"),
]

PASSWORD = "riqi-shi-zhongwen-47"
TICKS_JS = """() => Array.from(document.querySelectorAll('#timeseries .xtick text')).map((t) => t.textContent)"""


@pytest.fixture
def days_of_data(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Region
    from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, TargetFactory, WorkerFactory

    Region.objects.all().delete()
    lima = RegionFactory(slug="zh-lima", name="Lima", latitude=-12.0, longitude=-77.0)
    WorkerFactory(region=lima)
    target = TargetFactory(name="Dated target")
    probe = ProbeFactory(target=target, regions=[lima])
    now = datetime.now(UTC).replace(microsecond=0)
    started = [now - timedelta(hours=hours, minutes=7) for hours in (80, 56, 32, 8)]
    for when in started:
        MeasurementFactory(probe=probe, region=lima, started_at=when)
    get_user_model().objects.create_user("duzhe", "d@example.com", PASSWORD)
    return {"target": target, "latest": started[-1]}


def test_chinese_pages_write_chart_axes_and_times_with_chinese_dates(days_of_data, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    page.context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": origin}])
    login(page, origin, "duzhe", PASSWORD)

    page.goto(f"{origin}/?window=7d&over_time=heatmap")
    assert page.evaluate("() => document.documentElement.lang") == "zh-hans"
    page.wait_for_function(f"() => ({TICKS_JS})().length > 1")
    ticks = page.evaluate(TICKS_JS)
    # Midnight's label carries the date under the time, as Chinese writes it: 12月4日 or 2026年12月4日.
    assert any(re.search(r"\d+月\d+日", tick) for tick in ticks), ticks
    assert not any(re.search(r"[一二三四五六七八九十]+ \d", tick) for tick in ticks), ticks
    assert page.evaluate("() => document.getElementById('timeseries')._context.locale") == "zh-CN"
    snap(page, "overview-zh")

    page.goto(f"{origin}/targets/{days_of_data['target'].id}/")
    latest = days_of_data["latest"]
    local = latest + timedelta(hours=8)
    iso = latest.strftime("%Y-%m-%dT%H:%M:%SZ")
    cell = page.locator(f'#recent-measurements time[datetime="{iso}"]')
    page.wait_for_function("() => !document.querySelector('time[data-utc]').textContent.endsWith('UTC')")
    assert cell.text_content() == f"{local.year}年{local.month}月{local.day}日 {local:%H:%M:%S}"
    assert "Asia/Shanghai" in page.inner_text("#time-zone-note")
    assert page.recorder.page_errors == [], page.recorder.page_errors
