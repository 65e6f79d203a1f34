"""Two evaluation processes judge the same burning objective at the same moment (a slow pass overlapping the next,
a backfill beside the beat): both read its state ok, both try to move it; the compare-and-swap lets one through.
One incident, one delivery, one notification queued, and the loser says it left the objective to the other.

The overlap is made certain, not hoped for: the test holds the state's row locked until both processes are waiting
on it, then lets them go together."""

from __future__ import annotations

import pytest

from probes.models import ObjectiveAlertState
from tests.factories import NotificationChannelFactory
from tests.slos_alerts.conftest import at
from tests.support import assert_one_evaluator_moved_it, race_two_evaluators

pytestmark = pytest.mark.timeout(180)


def test_two_processes_judging_the_same_objective_at_once_open_one_incident(pipeline, scene):
    lagos = scene.regions[0]
    scene.objective.channels.set([NotificationChannelFactory()])
    scene.calls(lagos, at(-60), at(-5), good=140, bad=40)
    scene.calls(lagos, at(-5), at(0), good=15, bad=5)
    scene.count()
    scene.quiet_hours(lagos, good=2000)
    state = ObjectiveAlertState.objects.create(objective=scene.objective)

    logs = race_two_evaluators(pipeline, "probes_objectivealertstate", state.id, at(0))
    assert_one_evaluator_moved_it(pipeline, logs)
