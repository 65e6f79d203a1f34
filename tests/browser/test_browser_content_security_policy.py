"""Every page works under its Content-Security-Policy in headless Chromium, and names are text on the map.

For each page (login, overview, a region, a target, the incidents list, the objectives, an objective with its
charts and its SLA report, the admin's index, a target's change
form and the alert rule add form; the incident page has a test of its own,
test_browser_incident_page_draws_its_charts_and_acknowledges.py) the test
collects `securitypolicyviolation` events (an init script listens from the first byte of every document) and
console errors, and asserts there are none; the policy header itself must forbid eval and inline scripts. On
the overview it checks that the map and every chart really drew (SVG content), and that a target whose
location name holds an <a href> shows that text and no link."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.pages import OBJECTIVE_READY_JS
from tests.browser.test_browser_live_dashboard import DATA_REGIONS, _measurement_fields
from tests.factories import ServiceLevelObjectiveFactory, SLOHourCountFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-77"
EVIL = "https://evil.example/phish"
LOCATION = f'<a href="{EVIL}">Ashburn</a>'

COLLECT_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(
    `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
});
"""
CHARTS_DRAWN_JS = """() => ['map', 'histograms', 'timeseries', 'phases'].every((id) => {
  const el = document.getElementById(id);
  // A heatmap is drawn as an image in a .hm group, every other trace in a .trace group.
  return !!el && !!el.querySelector('svg.main-svg') && el.querySelectorAll('.trace, .hm image').length > 0;
})"""
MAP_LINKS_JS = """() => Array.from(document.querySelectorAll('#map a')).map(
  (a) => a.getAttribute('href') || a.getAttribute('xlink:href')
    || a.getAttributeNS('http://www.w3.org/1999/xlink', 'href'))"""


@pytest.fixture
def site(transactional_db):
    from django.contrib.auth import get_user_model

    from probes.models import Measurement, Probe, Region, ServiceLevelObjective, Target

    Region.objects.all().delete()
    regions = {
        slug: Region.objects.create(slug=slug, name=name, city=name, country=cc, latitude=lat, longitude=lon)
        for slug, name, cc, lat, lon, _ in DATA_REGIONS
    }
    target = Target.objects.create(
        name="CSP test target",
        api_style="openai",
        url="http://127.0.0.1:9/v1/chat/completions",
        model="test-model",
        api_key_env="TEST_API_KEY",
        location_name=LOCATION,
        latitude=39.04,
        longitude=-77.49,
    )
    probe = Probe.objects.create(target=target, name="csp probe", interval_seconds=60, timeout_seconds=30.0)
    probe.regions.set(regions.values())
    rng = random.Random(7)
    now = datetime.now(UTC).replace(microsecond=0)
    Measurement.objects.bulk_create(
        Measurement(
            probe=probe,
            target=target,
            region=regions[slug],
            scheduled_for=now - timedelta(minutes=2 * i + 1),
            started_at=now - timedelta(minutes=2 * i + 1),
            worker="w",
            **_measurement_fields(rng, base, "cold" if i % 3 == 0 else "warm", failed=(i == 4)),
        )
        for slug, *_rest, base in DATA_REGIONS
        for i in range(12)
    )
    get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)
    # An objective with a day of hour counts: its page draws its two charts.
    objective = ServiceLevelObjectiveFactory(targets=[target])
    hour = now.replace(minute=0, second=0)
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(
        counted_condition=objective.condition_fingerprint(), exact_since=hour - timedelta(days=2)
    )
    for back in range(24):
        for region in regions.values():
            SLOHourCountFactory(
                objective=objective, target=target, region=region, hour=hour - timedelta(hours=back), bad=back % 2
            )
    return {"target": target, "region": next(iter(regions.values())), "objective": objective}


def visit(page, url: str, ready=None) -> list[str]:
    """Open url, wait until it is ready, return its CSP violations and console errors."""
    rec = page.recorder
    rec.console_errors.clear()
    response = page.goto(url)
    assert response is not None and response.status == 200, (url, response and response.status)
    policy = response.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy, (url, policy)
    script_src = next((d for d in policy.split(";") if d.strip().startswith("script-src")), "")
    assert script_src and "'unsafe-eval'" not in script_src and "'unsafe-inline'" not in script_src, policy
    if ready:
        page.wait_for_function(ready, timeout=20_000)
    page.wait_for_load_state("networkidle")
    violations = page.evaluate("() => window.__cspViolations || null")
    assert violations is not None, f"{url}: the violation listener did not run"
    return [f"{url}: {v}" for v in violations] + [f"{url}: console: {e}" for e in rec.console_errors]


def test_every_page_runs_under_the_policy_and_the_charts_draw(site, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    origin = asgi_server.origin
    problems = []

    problems += visit(page, f"{origin}/accounts/login/")
    problems += visit(page, f"{origin}/admin/login/")
    login(page, origin, "boss", PASSWORD)

    target_id = site["target"].id
    problems += visit(page, f"{origin}/?target={target_id}", ready=CHARTS_DRAWN_JS)
    snap(page, "overview")
    # The live feed connected under connect-src.
    assert any("/ws/measurements/" in u for u in page.recorder.websockets_open), page.recorder.websockets
    # The hosting location is shown as the text it is, not as a link.
    assert page.evaluate(MAP_LINKS_JS) == []
    assert LOCATION in page.locator("#map").text_content()

    problems += visit(page, f"{origin}/regions/{site['region'].slug}/")
    problems += visit(page, f"{origin}/targets/{target_id}/")
    problems += visit(page, f"{origin}/incidents/")
    objective = site["objective"]
    problems += visit(page, f"{origin}/slos/")
    problems += visit(page, f"{origin}/slos/{objective.id}/", ready=OBJECTIVE_READY_JS)
    problems += visit(page, f"{origin}/slos/{objective.id}/report")
    problems += visit(page, f"{origin}/admin/probes/alertrule/add/")
    problems += visit(page, f"{origin}/admin/")
    problems += visit(page, f"{origin}/admin/probes/target/{target_id}/change/")
    snap(page, "admin-change-form")

    assert problems == [], "\n".join(problems)
    assert page.recorder.page_errors == [], page.recorder.page_errors
