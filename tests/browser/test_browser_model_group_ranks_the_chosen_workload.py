"""In headless Chromium: on a model group's page a reader chooses a workload in the filter form (a plain GET form,
no script) and the leaderboard ranks that workload's calls: "Groq" leads with short prompts, "Together" with
prompts of 100k tokens, and the page names the workload it shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS
from tests.factories import MeasurementFactory, ModelGroupFactory, ProbeFactory, RegionFactory, TargetFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-58"
# TTFT (ms) of each target's probes by workload: the two targets rank the other way round for each.
TTFT = {"Groq": {"short": 100.0, "prompt_100k": 5000.0}, "Together": {"short": 500.0, "prompt_100k": 2000.0}}


@pytest.fixture
def site(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Measurement, Region

    Region.objects.all().delete()
    oslo = RegionFactory(slug="wl-oslo", name="Oslo", city="Oslo")
    now = datetime.now(UTC)
    start, step = now - timedelta(minutes=40), timedelta(seconds=30)
    targets = []
    for name, figures in TTFT.items():
        target = TargetFactory(name=name)
        targets.append(target)
        for workload, ttft in figures.items():
            probe = ProbeFactory(target=target, regions=[oslo], workload=workload)
            Measurement.objects.bulk_create(
                MeasurementFactory.build(
                    probe=probe, region=oslo, scheduled_for=start + step * i, ttft_ms=ttft + i, workload=workload
                )
                for i in range(40)
            )
    ModelGroupFactory(name="Llama 3.1 70B", targets=targets)
    get_user_model().objects.create_user("ranker", "ranker@example.com", PASSWORD)


def ranked(page) -> list[str]:
    return page.locator("#leaderboard tbody tr th a").all_text_contents()


def test_choosing_a_workload_reranks_the_leaderboard(site, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    login(page, asgi_server.origin, "ranker", PASSWORD)

    with page.expect_navigation():
        page.locator("#nav-models").click()
    with page.expect_navigation():
        page.get_by_role("link", name="Llama 3.1 70B").click()
    page.locator("#leaderboard").wait_for()
    assert page.locator("#workload-name").text_content() == "All workloads"
    assert page.locator("#workload-mixed").is_visible()

    workload = page.get_by_label("Workload")
    for choice, label, leader in (
        ("short", "short prompt", "Groq"),
        ("prompt_100k", "prompt of about 100k tokens", "Together"),
    ):
        workload.select_option(choice)
        with page.expect_navigation():
            page.get_by_role("button", name="Rank targets").click()
        assert f"workload={choice}" in page.url
        assert ranked(page)[0] == leader
        assert page.locator("#workload-name").text_content() == label
        assert not page.locator("#workload-mixed").is_visible()
        # The form shows the choice it ranked, ready for the next one.
        assert page.get_by_label("Workload").input_value() == choice
        assert page.locator("#leaderboard tbody tr").first.locator("td").nth(5).text_content() == "40"
    snap(page, "leaderboard-workload")
    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.page_errors == [] and page.recorder.console_errors == []
