"""In headless Chromium: from the overview's "Where my users are" card, a reader enters a traffic mix (Lagos 60,
London 40), submits it, finds it in the URL, and sees every target ranked for that mix, under the page's
Content-Security-Policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS
from tests.factories import ProbeFactory, RegionFactory, TargetFactory, spread_measurements

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-13"


@pytest.fixture
def site(transactional_db):
    """Two regions; "Split" answers Lagos in 100 ms and London in 2 s, "Even" both in 600 ms."""
    from django.contrib.auth import get_user_model

    from probes.models import Region

    Region.objects.all().delete()  # the migration's seeded regions: two inputs are enough here
    lagos = RegionFactory(slug="bm-lagos", name="Lagos", city="Lagos", latitude=6.52, longitude=3.38)
    london = RegionFactory(slug="bm-london", name="London", city="London", latitude=51.51, longitude=-0.13)
    now = datetime.now(UTC)
    for name, lagos_ms, london_ms in (("Split", 100.0, 2000.0), ("Even", 600.0, 600.0)):
        target = TargetFactory(name=name, location_name="Lagos", latitude=6.45, longitude=3.4)
        probe = ProbeFactory(target=target, regions=[lagos, london])
        spread_measurements(probe, lagos, now - timedelta(minutes=30), now, 8, seed=1, ttft_ms=lagos_ms)
        spread_measurements(probe, london, now - timedelta(minutes=30), now, 8, seed=2, ttft_ms=london_ms)
    get_user_model().objects.create_user("mixer", "mixer@example.com", PASSWORD)


def test_a_mix_entered_on_the_page_is_kept_in_the_url_and_ranks_the_targets(site, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    origin = asgi_server.origin
    login(page, origin, "mixer", PASSWORD)

    with page.expect_navigation():
        page.locator("#mix-link a").click()
    assert urlsplit(page.url).path == "/where/"
    page.recorder.console_errors.clear()  # from here on, this page's own
    assert page.locator("#mix-empty").is_visible()

    page.get_by_label("Lagos").fill("60")
    page.get_by_label("London").fill("40")
    with page.expect_navigation():
        page.get_by_role("button", name="Rank targets").click()

    query = parse_qs(urlsplit(page.url).query)
    assert query["share-bm-lagos"] == ["60"] and query["share-bm-london"] == ["40"]
    page.locator("#mix-ranking").wait_for()
    ranked = page.locator("#mix-ranking tbody tr td:nth-child(2) > a").all_text_contents()
    # The median user of this mix is in Lagos, where Split answers in 100 ms.
    assert ranked == ["Split", "Even"]
    assert "Lagos 60 %" in " ".join(page.locator("#mix-summary").text_content().split())
    # The form shows the mix it ranked, to be changed.
    assert page.get_by_label("Lagos").input_value() == "60"
    snap(page, "ranking")

    # The same URL, opened again, gives the same ranking: the mix lives in the link.
    page.goto(page.url)
    assert page.locator("#mix-ranking tbody tr td:nth-child(2) > a").all_text_contents() == ["Split", "Even"]
    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.page_errors == [] and page.recorder.console_errors == []
