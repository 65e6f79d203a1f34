"""In headless Chromium: a target's page shows its "Workloads" section, a table per region (each workload class's
calls and medians, the prefill slope and rate, the cache and the rate limits in words), the chart of median TTFT
against input tokens on a log axis with each region's fitted line, and the chart of the rate-limited share and
headroom over time, under the page's Content-Security-Policy; a target without calls says so instead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from probes.models import Measurement
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, TargetFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-58"
# Per region: TTFT = base + ms_per_token * input tokens, at each long workload's input length.
REGIONS = {"bw-oslo": ("Oslo", 200.0, 0.5), "bw-lima": ("Lima", 400.0, 0.25)}
INPUTS = {"short": 20, "prompt_1k": 1000, "prompt_10k": 10_000, "prompt_100k": 100_000}


@pytest.fixture
def site(transactional_db):
    from django.contrib.auth import get_user_model

    target = TargetFactory(name="Workload target")
    regions = [RegionFactory(slug=slug, name=name) for slug, (name, _b, _s) in REGIONS.items()]
    probe = ProbeFactory(target=target, regions=regions)
    quiet = TargetFactory(name="Quiet target")
    ProbeFactory(target=quiet, regions=regions[:1])
    now = datetime.now(UTC)
    rows = []
    for region in regions:
        _name, base, per_token = REGIONS[region.slug]
        for minute in range(60):
            at = now - timedelta(minutes=90 - minute)
            workload = list(INPUTS)[minute % len(INPUTS)]
            tokens = INPUTS[workload]
            row = {"region_id": region.id, "started_at": at, "workload": workload, "input_tokens": tokens,
                   "ttft_ms": base + per_token * tokens, "ratelimit_remaining_requests": 100 - minute}  # fmt: skip
            if minute % 10 == 9:
                row |= {"outcome": "rate_limited", "http_status": 429, "ttft_ms": None}
            rows.append(row)
    Measurement.objects.bulk_create(MeasurementFactory.build_rows(rows, probe=probe))
    get_user_model().objects.create_user("loader", "loader@example.com", PASSWORD)
    return target, quiet


def test_the_target_page_draws_the_workload_tables_and_charts(site, asgi_server, browser_page):
    target, quiet = site
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    login(page, asgi_server.origin, "loader", PASSWORD)
    page.goto(f"{asgi_server.origin}/targets/{target.id}/")

    oslo = page.locator('#workloads table.workloads-table[data-region="bw-oslo"]')
    assert oslo.locator("tbody tr").count() == 4
    assert oslo.locator('tr[data-workload="prompt_10k"] td').nth(3).text_content() == "5,200"
    prefill = page.locator('#workloads ul[data-region="bw-oslo"] li.prefill').text_content()
    assert "500.0 ms per 1k input tokens" in prefill and "2,000 tokens/s" in prefill
    lima = page.locator('#workloads ul[data-region="bw-lima"] li.prefill').text_content()
    assert "250.0 ms per 1k input tokens" in lima and "4,000 tokens/s" in lima
    assert "refused for rate limits" in page.locator('#workloads ul[data-region="bw-oslo"] li.limits').text_content()

    page.wait_for_function("() => (document.getElementById('workloads-prefill').data || []).length === 4")
    drawn = page.evaluate(
        """() => {
            const el = document.getElementById('workloads-prefill');
            return {roles: el.data.map((t) => t.meta.role), axis: el._fullLayout.xaxis.type,
                    points: el.querySelectorAll('.scatterlayer .point').length};
        }"""
    )
    assert drawn["roles"] == ["classes", "fit", "classes", "fit"]
    assert drawn["axis"] == "log"
    assert drawn["points"] == 8  # four classes a region
    page.wait_for_function("() => (document.getElementById('workloads-rate-limits').data || []).length > 0")
    panels = page.evaluate("() => document.getElementById('workloads-rate-limits').data.map((t) => t.meta.panel)")
    assert sorted(set(panels)) == ["ratio", "requests"]
    snap(page, "workloads")

    # A week: the window selector keeps to raw reads' limit, and the page draws the same rows.
    assert page.locator('#workloads-form select[name="window"] option[value="30d"]').count() == 0
    page.locator('#workloads-form select[name="window"]').select_option("7d")
    with page.expect_navigation():
        page.locator("#workloads-form button[type=submit]").click()
    assert "window=7d" in page.url
    assert page.locator("#workloads table.workloads-table").count() == 2

    page.goto(f"{asgi_server.origin}/targets/{quiet.id}/")
    assert "No measurements" in page.locator("#workloads-empty").text_content()
    assert page.locator("#workloads-prefill").count() == 0
    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.page_errors == [] and page.recorder.console_errors == []
