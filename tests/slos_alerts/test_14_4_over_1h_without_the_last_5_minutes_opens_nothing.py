"""The short window is what makes the alert stop soon after the burning stops, and what keeps an hour that burned
earlier from paging now: 14.5x over the hour with a clean last 5 minutes opens nothing. A burn of exactly 14.4x is
not above 14.4x: nothing either."""

from __future__ import annotations

from probes.models import Incident, ObjectiveAlertState
from probes.readings.slos import objective_row
from tests.slos_alerts.conftest import NOW, at


def test_an_hour_above_14_4_with_clean_last_5_minutes_opens_nothing(scene):
    lagos = scene.regions[0]
    scene.calls(lagos, at(-60), at(-5), good=151, bad=29)
    scene.calls(lagos, at(-5), at(0), good=20, bad=0)
    scene.count()
    scene.quiet_hours(lagos)

    row = objective_row(scene.objective.id, NOW)
    assert round(row.burn["1h"], 6) == 14.5 and row.burn["5m"] == 0.0

    report = scene.run(0)

    assert (report.opened, report.objectives) == (0, 1)
    assert not Incident.objects.exists()
    assert not ObjectiveAlertState.objects.filter(status=ObjectiveAlertState.FIRING).exists()


def test_a_burn_of_exactly_14_4_is_not_above_it(scene):
    lagos = scene.regions[0]
    scene.calls(lagos, at(-60), at(-5), good=193, bad=32)
    scene.calls(lagos, at(-5), at(0), good=21, bad=4)
    scene.count()
    scene.quiet_hours(lagos)

    row = objective_row(scene.objective.id, NOW)
    assert round(row.burn["1h"], 6) == 14.4 and row.burn["5m"] > 14.4

    assert scene.run(0).opened == 0
    assert not Incident.objects.exists()
