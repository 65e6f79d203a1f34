"""A target's status: from the page's objectives that cover it (outage while a page-level burn-rate alert holds for
its calls, degraded while a ticket's does, operational otherwise); from its open incidents when none covers it
(outage for a global one, degraded for a regional one). The page's status is its worst target's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.readings.status import status_reading
from tests.factories import IncidentFactory, ProbeFactory, TargetFactory

HOUR = timedelta(hours=1)


def _target(reading, target):
    return next(t for t in reading.targets if t.target_id == target.id)


def test_all_good_calls_are_operational(scene):
    now = datetime.now(UTC)
    scene.calls(now - 6 * HOUR, now, good=300, bad=0)
    reading = status_reading(scene.page.id, now)
    assert _target(reading, scene.target).status == "operational"
    assert _target(reading, scene.target).from_objectives
    assert reading.status == "operational"


def test_half_the_last_hours_calls_failing_is_an_outage(scene):
    now = datetime.now(UTC)
    # Over the last hour and its last 5 minutes alike: 50 % bad, a burn of 50 (> 14.4).
    scene.calls(now - HOUR, now, good=60, bad=60)
    reading = status_reading(scene.page.id, now)
    assert _target(reading, scene.target).status == "outage"
    assert reading.status == "outage"


def test_a_slow_steady_burn_is_degraded(scene):
    now = datetime.now(UTC)
    # 3 % bad over six hours: a burn of 3, above 1 over 6 h and 3 d (a ticket), under 6 and 14.4 (no page).
    scene.calls(now - 6 * HOUR, now, good=970, bad=30)
    assert _target(status_reading(scene.page.id, now), scene.target).status == "degraded"


def test_a_target_without_objectives_takes_its_open_incidents(scene):
    other = TargetFactory(name="embed-us")
    ProbeFactory(target=other, regions=scene.regions)
    scene.page.targets.add(other)
    now = datetime.now(UTC)
    reading = status_reading(scene.page.id, now)
    assert _target(reading, other).status == "operational"
    assert not _target(reading, other).from_objectives

    regional = IncidentFactory(target=other, scope="regional", regions=[scene.regions[1]])
    assert _target(status_reading(scene.page.id, now), other).status == "degraded"
    IncidentFactory(target=other, scope="global", regions=scene.regions)
    reading = status_reading(scene.page.id, now)
    assert _target(reading, other).status == "outage"
    assert reading.status == "outage"

    # Resolved, they leave the status.
    type(regional).objects.filter(target=other).update(resolved_at=now)
    assert _target(status_reading(scene.page.id, now), other).status == "operational"


def test_an_incident_of_a_region_the_page_does_not_show_is_not_counted(scene):
    other = TargetFactory(name="embed-us")
    scene.page.targets.add(other)
    scene.page.regions.set([scene.regions[0]])
    IncidentFactory(target=other, scope="regional", regions=[scene.regions[1]])
    assert _target(status_reading(scene.page.id), other).status == "operational"
