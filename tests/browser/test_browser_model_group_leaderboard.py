"""In headless Chromium: from the header's "Models" link a reader opens a model group and sees its leaderboard
with two targets (ranks, intervals, calls) and the region x target matrix, one region with a clear winner and
one where the two targets' intervals overlap, shown as a tie, under the page's Content-Security-Policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS
from tests.factories import ModelGroupFactory, ProbeFactory, RegionFactory, TargetFactory
from tests.model_groups.support import store

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-47"


@pytest.fixture
def site(transactional_db):
    """Oslo: "Groq" 100 ms, "Together" 500 ms. Lima: both about 300 ms (overlapping intervals)."""
    from django.contrib.auth import get_user_model

    from probes.models import Region

    Region.objects.all().delete()
    oslo = RegionFactory(slug="bm-oslo", name="Oslo", city="Oslo")
    lima = RegionFactory(slug="bm-lima", name="Lima", city="Lima")
    now = datetime.now(UTC)
    start, step = now - timedelta(minutes=40), timedelta(seconds=10)
    groq, together = TargetFactory(name="Groq"), TargetFactory(name="Together")
    for target, oslo_ms, lima_ms in ((groq, 100.0, 300.0), (together, 500.0, 301.0)):
        probe = ProbeFactory(target=target, regions=[oslo, lima])
        store(probe, oslo, [oslo_ms + (i % 20) for i in range(200)], start, step)
        store(probe, lima, [lima_ms + (i % 20) for i in range(200)], start, step)
    ModelGroupFactory(name="Llama 3.1 70B", targets=[groq, together])
    get_user_model().objects.create_user("ranker", "ranker@example.com", PASSWORD)


def test_the_leaderboard_and_the_matrix_show_a_winner_and_a_tie(site, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    login(page, asgi_server.origin, "ranker", PASSWORD)

    with page.expect_navigation():
        page.locator("#nav-models").click()
    with page.expect_navigation():
        page.get_by_role("link", name="Llama 3.1 70B").click()
    page.locator("#leaderboard").wait_for()

    ranked = page.locator("#leaderboard tbody tr th a").all_text_contents()
    # Every region pooled, the default: Groq's median is Oslo's and Lima's values together, lower than Together's.
    assert ranked == ["Groq", "Together"]
    assert page.locator("#leaderboard tbody tr td:first-child").all_text_contents() == ["1", "2"]
    assert page.locator("#leaderboard tbody tr").first.locator("td").nth(5).text_content() == "400"

    oslo = page.locator('#region-matrix tr[data-region="bm-oslo"]')
    lima = page.locator('#region-matrix tr[data-region="bm-lima"]')
    assert oslo.locator("td.winner").count() == 1 and oslo.locator("td.tied").count() == 0
    assert "best" in oslo.locator("td").first.text_content()
    assert lima.locator("td.winner").count() == 1 and lima.locator("td.tied").count() == 1
    assert "tied" in lima.locator("td.tied").text_content()
    snap(page, "leaderboard")

    # From one region: Lima alone ranks the two as tied.
    page.locator('select[name="region"]').select_option("bm-lima")
    with page.expect_navigation():
        page.get_by_role("button", name="Rank targets").click()
    assert "region=bm-lima" in page.url
    assert all("tied" in t for t in page.locator("#leaderboard td.tied-with").all_text_contents())
    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.page_errors == [] and page.recorder.console_errors == []
