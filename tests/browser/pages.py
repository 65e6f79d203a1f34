"""A small site with data on every page, and the pages a person visits, for the layout and accessibility tests.

`make_site()` stores four regions, two targets (one with a hosting location, so the map draws paths) measured
over the last two hours with some failures (so the target page shows both tables), an open incident of the
hosted target (with a timeline and a silence) and a resolved one, an objective over both targets with a day of
hour counts, and a superuser. `PAGES`
names each page and what must be on it before it is judged: the overview's charts drawn and its table filled.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tests.factories import (
    AlertRuleFactory,
    IncidentEventFactory,
    IncidentFactory,
    ProbeFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    SilenceFactory,
    SLOHourCountFactory,
    TargetFactory,
    WorkerFactory,
    spread_measurements,
)

USERNAME = "boss"
PASSWORD = "correct-horse-battery-staple-77"
REGIONS = [
    ("pg-lagos", "Lagos", "NG", 6.52, 3.38, 620.0),
    ("pg-london", "London", "GB", 51.51, -0.13, 310.0),
    ("pg-tokyo", "Tokyo", "JP", 35.68, 139.65, 480.0),
    ("pg-saopaulo", "São Paulo", "BR", -23.55, -46.63, 450.0),
]
MEASUREMENTS_PER_REGION = 24

# Every chart holds a drawn figure with traces, and the table's "Loading…" row is gone.
OVERVIEW_READY_JS = """() => {
  const charts = ['map', 'histograms', 'timeseries', 'phases'].every((id) => {
    const el = document.getElementById(id);
    // A heatmap is drawn as an image in a .hm group, every other trace in a .trace group.
    return !!el && !!el.querySelector('svg.main-svg') && el.querySelectorAll('.trace, .hm image').length > 0;
  });
  const table = document.querySelector('#region-target-table tbody');
  return charts && !!table && table.querySelectorAll('a').length > 0;
}"""


# Both charts of the incident page drawn.
INCIDENT_READY_JS = """() => ['incident-timeseries', 'incident-phases'].every((id) => {
  const el = document.getElementById(id);
  return !!el && !!el.querySelector('svg.main-svg') && el.querySelectorAll('.trace').length > 0;
})"""


# Both charts of an objective's page drawn.
OBJECTIVE_READY_JS = """() => ['slo-burn-down', 'slo-goodput'].every((id) => {
  const el = document.getElementById(id);
  return !!el && !!el.querySelector('svg.main-svg') && el.querySelectorAll('.trace').length > 0;
})"""


@dataclass(frozen=True)
class Page:
    name: str
    path: str
    ready_js: str | None = None


def make_site() -> list[Page]:
    """Store the site's rows (committed: the browser reads them through uvicorn) and return its pages."""
    from django.contrib.auth import get_user_model

    from probes.models import Region

    Region.objects.all().delete()  # the migrations' seeded regions would sit on the map without data
    regions = {
        slug: (RegionFactory(slug=slug, name=name, city=name, country=cc, latitude=lat, longitude=lon), median)
        for slug, name, cc, lat, lon, median in REGIONS
    }
    hosted = TargetFactory(name="Hosted target", location_name="Ashburn, Virginia", latitude=39.04, longitude=-77.49)
    plain = TargetFactory(name="Plain target", model="another-model")
    end = datetime.now(UTC).replace(microsecond=0)
    start = end - timedelta(hours=2)
    for n, target in enumerate((hosted, plain)):
        probe = ProbeFactory(target=target, regions=[region for region, _ in regions.values()])
        for i, (region, median) in enumerate(regions.values()):
            spread_measurements(
                probe, region, start, end, MEASUREMENTS_PER_REGION, seed=10 * n + i, median=median, fail_every=7
            )
    for region, _median in regions.values():
        # A worker heard in every region, with the site's: the region page lists it, the map colours the region.
        WorkerFactory(region=region, hostname=f"{region.slug}-vm")
    get_user_model().objects.create_superuser(USERNAME, f"{USERNAME}@example.com", PASSWORD)
    incident = _incidents(hosted, [region for region, _ in regions.values()], end)
    objective = _objective([hosted, plain], [region for region, _ in regions.values()], end)
    return [
        Page("overview", "/", OVERVIEW_READY_JS),
        Page("region", f"/regions/{REGIONS[0][0]}/"),
        Page("target", f"/targets/{hosted.id}/"),
        Page("admin index", "/admin/"),
        Page("incidents", "/incidents/"),
        Page("incident", f"/incidents/{incident.id}/", INCIDENT_READY_JS),
        Page("objectives", "/slos/"),
        Page("objective", f"/slos/{objective.id}/", OBJECTIVE_READY_JS),
        Page("SLA report", f"/slos/{objective.id}/report"),
    ]


def _objective(targets, regions, now: datetime):
    """An objective over both targets, counted (as slo_rebuild leaves it), with hour counts in every region over
    the last day, some bad: its page draws both charts and its tables have rows."""
    from probes.models import ServiceLevelObjective

    objective = ServiceLevelObjectiveFactory(name="Chat within 800 ms", targets=targets, objective_percent=99.0)
    hour = now.replace(minute=0, second=0, microsecond=0)
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(
        counted_condition=objective.condition_fingerprint(), exact_since=hour - timedelta(days=2)
    )
    for back in range(24):
        for n, region in enumerate(regions):
            for target in targets:
                SLOHourCountFactory(
                    objective=objective,
                    target=target,
                    region=region,
                    hour=hour - timedelta(hours=back),
                    good=60,
                    degraded=3,
                    bad=(back + n) % 3,
                    bad_minutes=(1 << ((back + n) % 3)) - 1,
                )
    return objective


def _incidents(target, regions, now: datetime):
    """An open incident of `target` from two regions (with its timeline and a silence), and a resolved one."""
    from probes.models import IncidentEvent

    rule = AlertRuleFactory(name="TTFT p95 slow", target=target)
    open_one = IncidentFactory(
        rule=rule,
        target=target,
        regions=regions[:2],
        started_at=now - timedelta(minutes=50),
        opened_at=now - timedelta(minutes=40),
    )
    IncidentEventFactory(incident=open_one, at=open_one.opened_at, kind=IncidentEvent.OPENED)
    IncidentEventFactory(
        incident=open_one,
        at=open_one.opened_at + timedelta(minutes=5),
        kind=IncidentEvent.REGION_JOINED,
        region=regions[1],
    )
    resolved = IncidentFactory(
        rule=rule,
        target=target,
        regions=regions[:1],
        started_at=now - timedelta(hours=20),
        opened_at=now - timedelta(hours=20),
        resolved_at=now - timedelta(hours=19),
    )
    IncidentEventFactory(incident=resolved, at=resolved.resolved_at, kind=IncidentEvent.RESOLVED)
    SilenceFactory(target=target, reason="provider maintenance")
    return open_one


def open_page(page, origin: str, site_page: Page) -> None:
    response = page.goto(f"{origin}{site_page.path}")
    assert response is not None and response.status == 200, (site_page, response and response.status)
    if site_page.ready_js:
        page.wait_for_function(site_page.ready_js, timeout=30_000)
    page.wait_for_load_state("networkidle")
