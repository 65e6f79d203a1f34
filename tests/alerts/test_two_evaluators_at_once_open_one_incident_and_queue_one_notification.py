"""Two evaluation processes fire the same rule at the same moment (a slow pass overlapping the next, a backfill
beside the beat): both read the pending state, both try to move it; the compare-and-swap lets one through. One
incident, one delivery per channel, one notification queued, and the loser says it left the rule to the other.

The overlap is made certain, not hoped for: the test holds the state's row locked until both processes are
waiting on it, then lets them go together."""

import pytest

from probes.alerts.evaluate import run_pass
from probes.models import AlertState
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory
from tests.support import assert_one_evaluator_moved_it, race_two_evaluators

pytestmark = pytest.mark.timeout(180)


def test_two_processes_firing_the_same_rule_at_once_open_one_incident(pipeline, world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
    channel = NotificationChannelFactory()
    rule = AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])
    run_pass(at(-10))
    state = AlertState.objects.get(rule=rule)
    assert state.status == AlertState.PENDING

    logs = race_two_evaluators(pipeline, "probes_alertstate", state.id, at(0))
    assert_one_evaluator_moved_it(pipeline, logs)
