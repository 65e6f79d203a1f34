"""In headless Chromium: a signed-in operator opens an open incident from the header's link, sees its two charts
draw under the Content-Security-Policy (no violation, no console error), and acknowledges it with the button;
the page then says who acknowledged it, and the timeline has the event."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS, visit

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

USERNAME = "oncall"
PASSWORD = "correct-horse-battery-staple-13"
CHARTS_DRAWN_JS = """() => ['incident-timeseries', 'incident-phases'].every((id) => {
  const el = document.getElementById(id);
  return !!el && !!el.querySelector('svg.main-svg') && el.querySelectorAll('.trace').length > 0;
})"""


@pytest.fixture
def incident(transactional_db):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    from probes.models import IncidentEvent, Region
    from tests.factories import (
        AlertRuleFactory,
        IncidentEventFactory,
        IncidentFactory,
        ProbeFactory,
        RegionFactory,
        TargetFactory,
        spread_measurements,
    )

    Region.objects.all().delete()
    lagos = RegionFactory(slug="bi-lagos", name="Lagos", city="Lagos", country="NG", latitude=6.52, longitude=3.38)
    nairobi = RegionFactory(
        slug="bi-nairobi", name="Nairobi", city="Nairobi", country="KE", latitude=-1.29, longitude=36.82
    )
    target = TargetFactory(name="gpt-eu")
    probe = ProbeFactory(target=target, regions=[lagos, nairobi])
    now = datetime.now(UTC).replace(microsecond=0)
    for n, region in enumerate((lagos, nairobi)):
        spread_measurements(probe, region, now - timedelta(hours=2), now, 60, seed=n, median=700.0)
    rule = AlertRuleFactory(name="TTFT p95 slow", target=target)
    incident = IncidentFactory(
        rule=rule,
        target=target,
        regions=[lagos, nairobi],
        started_at=now - timedelta(minutes=40),
        opened_at=now - timedelta(minutes=30),
    )
    IncidentEventFactory(incident=incident, at=incident.opened_at, kind=IncidentEvent.OPENED)
    user = get_user_model().objects.create_user(USERNAME, password=PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="acknowledge_incident"))
    return incident


def test_the_incident_page_draws_its_charts_under_the_policy_and_acknowledges(incident, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    origin = asgi_server.origin
    login(page, origin, USERNAME, PASSWORD)

    problems = visit(page, f"{origin}/incidents/")
    assert page.locator("#nav-incidents .nav-count").text_content().strip() == "1"
    problems += visit(page, f"{origin}/incidents/{incident.id}/", ready=CHARTS_DRAWN_JS)
    snap(page, "incident")
    assert problems == [], "\n".join(problems)
    # The charts were read from the dashboard's API, with the incident's window.
    assert any("/api/timeseries?" in u and "window=custom" in u for u in page.recorder.urls), page.recorder.urls

    with page.expect_navigation():
        page.locator("#acknowledge").click()
    assert f"by {USERNAME}" in page.locator("#incident-acknowledged").text_content()
    assert page.locator("#acknowledge").count() == 0
    assert page.locator('#timeline-table tr[data-kind="acknowledged"]').count() == 1
    violations = page.evaluate("() => window.__cspViolations || []")
    assert violations == [] and page.recorder.page_errors == [], (violations, page.recorder.page_errors)
