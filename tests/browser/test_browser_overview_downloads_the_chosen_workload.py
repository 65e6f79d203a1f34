"""In headless Chromium: on the overview a reader chooses a workload and the "Download CSV" links follow the form
at once (dashboard.js), so regions.csv downloaded from the link holds the slow probe's calls alone, and choosing
every workload again takes the parameter away."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, TargetFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-71"
TTFT = {"short": 100.0, "prompt_100k": 5000.0}
CALLS = {"short": 30, "prompt_100k": 12}


@pytest.fixture
def site(transactional_db):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    from probes.models import Measurement

    oslo = RegionFactory(slug="dl-oslo", name="Oslo", city="Oslo")
    target = TargetFactory(name="Groq")
    start = datetime.now(UTC) - timedelta(minutes=40)
    for workload, ttft in TTFT.items():
        probe = ProbeFactory(target=target, regions=[oslo], workload=workload)
        Measurement.objects.bulk_create(
            MeasurementFactory.build(
                probe=probe, region=oslo, scheduled_for=start + timedelta(seconds=60 * i + 7 * len(workload)),
                ttft_ms=ttft, workload=workload,
            )
            for i in range(CALLS[workload])
        )  # fmt: skip
    user = get_user_model().objects.create_user("downloader", "downloader@example.com", PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="view_measurement"))


def test_the_links_follow_the_chosen_workload(site, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    login(page, asgi_server.origin, "downloader", PASSWORD)
    page.goto(f"{asgi_server.origin}/?window=1h")
    link = page.locator("#download-regions")
    assert "workload" not in link.get_attribute("href")

    page.get_by_label("Workload").select_option("prompt_100k")
    page.wait_for_function("() => document.getElementById('download-regions').href.includes('workload=prompt_100k')")
    assert "workload=prompt_100k" in page.locator("#download-measurements").get_attribute("href")
    with page.expect_download() as info:
        link.click()
    with open(info.value.path(), encoding="utf-8") as f:
        rows = list(csv.DictReader(io.StringIO(f.read())))
    # Hourly buckets: the calls can fall on either side of an hour's start, whatever the time the test runs.
    assert {(row["target"], row["ttft_p50_ms"]) for row in rows} == {("Groq", "5000")}
    assert sum(int(row["samples"]) for row in rows) == CALLS["prompt_100k"]

    page.get_by_label("Workload").select_option("")
    page.wait_for_function("() => !document.getElementById('download-regions').href.includes('workload')")
    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.page_errors == [] and page.recorder.console_errors == []
