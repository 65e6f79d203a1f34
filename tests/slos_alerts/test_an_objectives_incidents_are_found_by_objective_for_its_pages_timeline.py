"""An objective's page shows its own incidents on its timeline: incidents_overlapping(objective_id=...) finds the
burn-rate incidents of that objective over a window, not a rule's incident of the same target nor another
objective's; without it, every incident of the target is found as before."""

from __future__ import annotations

from probes.models import Incident
from probes.readings.incidents import incidents_overlapping
from tests.factories import IncidentFactory, ServiceLevelObjectiveFactory
from tests.slos_alerts.conftest import NOW, at


def test_an_objectives_incidents_are_found_by_objective(scene):
    lagos = scene.regions[0]
    scene.calls(lagos, at(-60), at(-5), good=140, bad=40)
    scene.calls(lagos, at(-5), at(0), good=15, bad=5)
    scene.count()
    scene.quiet_hours(lagos, good=2000)
    scene.run(0)
    burn = Incident.objects.get()
    rule = IncidentFactory(target=scene.target, started_at=at(-30), opened_at=at(-20))
    other = ServiceLevelObjectiveFactory(targets=[scene.target])
    IncidentFactory(
        rule=None, objective=other, severity="ticket", target=scene.target, started_at=at(-30), opened_at=at(-30)
    )

    found = incidents_overlapping(at(-60), at(60), objective_id=scene.objective.id)

    assert [(row.id, row.kind, row.severity, row.rule_name) for row in found] == [
        (burn.id, "objective", "page", "chat 99")
    ]
    assert found[0].rule_id is None and found[0].unit == "x" and found[0].window_minutes == 60
    everything = incidents_overlapping(NOW - (at(60) - NOW), at(60), target_ids=[scene.target.id])
    assert {row.id for row in everything} == {
        burn.id,
        rule.id,
        *Incident.objects.filter(objective=other).values_list("id", flat=True),
    }
