"""A rule without a target watches every measured target, each its own incident: one slow target fires alone."""

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import World, at
from tests.factories import AlertRuleFactory, ProbeFactory, TargetFactory


def test_a_rule_for_every_target_opens_an_incident_for_the_slow_target_only(world):
    other = TargetFactory(name="claude-us")
    other_world = World(other, ProbeFactory(target=other, regions=world.regions), world.regions)
    for i, region in enumerate(world.regions):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
        other_world.calls(region, at(-25), at(0), seed=10 + i)
    AlertRuleFactory(target=None, threshold_ms=1500.0, min_regions=2)

    run_pass(at(-10))
    report = run_pass(at(0))

    assert report.pairs == 2 and report.opened == 1
    incident = Incident.objects.get()
    assert incident.target == world.target
    assert " to gpt-eu " in incident.summary
