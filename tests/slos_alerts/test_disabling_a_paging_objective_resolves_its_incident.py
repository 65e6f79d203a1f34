"""An objective switched off while it pages is no longer judged: the next pass resolves its incident and says why
on the timeline, rather than leaving it open for ever; enabled again and still burning, it opens a new one."""

from __future__ import annotations

from probes.models import Incident, IncidentEvent, ObjectiveAlertState, ServiceLevelObjective
from tests.slos_alerts.conftest import at


def test_disabling_resolves_and_the_timeline_says_why(scene):
    lagos = scene.regions[0]
    scene.calls(lagos, at(-60), at(-5), good=140, bad=40)
    scene.calls(lagos, at(-5), at(0), good=15, bad=5)
    scene.count()
    scene.quiet_hours(lagos, good=2000)
    assert scene.run(0).opened == 1

    ServiceLevelObjective.objects.filter(pk=scene.objective.pk).update(enabled=False)
    report = scene.run(0.5)

    assert (report.resolved, report.objectives) == (1, 0)
    incident = Incident.objects.get()
    assert incident.resolved_at == at(0.5)
    resolved = incident.events.get(kind=IncidentEvent.RESOLVED)
    assert resolved.detail == "the objective was disabled, or changed and is being counted again"
    assert ObjectiveAlertState.objects.get().status == ObjectiveAlertState.OK

    ServiceLevelObjective.objects.filter(pk=scene.objective.pk).update(enabled=True)
    assert scene.run(1).opened == 1
    assert Incident.objects.filter(resolved_at__isnull=True).count() == 1
