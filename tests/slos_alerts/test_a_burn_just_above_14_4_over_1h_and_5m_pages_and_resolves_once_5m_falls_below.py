"""The workbook's fast page: a burn above 14.4x over both the last hour and the last 5 minutes opens a page at once
(no pending delay: the hour is the alert's own window), and once the last 5 minutes are clean again it resolves,
though the hour still burns. The numbers are the objective's (99 %): 29 bad of 200 calls in the hour is 14.5x, 3 of
20 in its last 5 minutes 15x."""

from __future__ import annotations

from probes.models import Incident, IncidentEvent, ObjectiveAlertState
from probes.readings.slos import objective_row
from tests.slos_alerts.conftest import NOW, at


def test_a_page_opens_above_14_4_and_resolves_when_the_5_minute_burn_falls(scene):
    lagos = scene.regions[0]
    scene.calls(lagos, at(-60), at(-55), good=20, bad=0)
    scene.calls(lagos, at(-55), at(-5), good=134, bad=26)
    scene.calls(lagos, at(-5), at(0), good=17, bad=3)
    scene.calls(lagos, at(0), at(5), good=20, bad=0)  # after NOW: clean again
    scene.count()
    scene.quiet_hours(lagos)

    row = objective_row(scene.objective.id, NOW)
    assert round(row.burn["1h"], 6) == 14.5 and round(row.burn["5m"], 6) == 15.0
    assert row.burn["6h"] <= 1.0

    report = scene.run(0)

    assert report.opened == 1
    incident = Incident.objects.get()
    assert (incident.objective_id, incident.rule_id, incident.severity) == (scene.objective.id, None, "page")
    assert (incident.started_at, incident.opened_at, incident.target_id) == (NOW, NOW, scene.target.id)
    assert incident.summary_data["factor"] == 14.4 and incident.summary_data["long"] == "1h"
    assert round(incident.peak_value, 6) == 14.5
    assert ObjectiveAlertState.objects.get(objective=scene.objective).status == ObjectiveAlertState.FIRING

    # The same minute again (a second pass, a retry): nothing new.
    assert scene.run(0).opened == 0

    # Five minutes on, the last 5 minutes hold only good calls: the hour still burns 14.5x, the alert ends.
    later = objective_row(scene.objective.id, at(5))
    assert round(later.burn["1h"], 6) == 14.5 and later.burn["5m"] == 0.0
    assert scene.run(5).resolved == 1

    incident.refresh_from_db()
    assert incident.resolved_at == at(5)
    resolved = incident.events.get(kind=IncidentEvent.RESOLVED)
    assert resolved.detail == "the burn over 5 min fell to 14.4x or below"
    assert ObjectiveAlertState.objects.get(objective=scene.objective).status == ObjectiveAlertState.OK
    assert scene.run(10).opened == 0
