"""A rule switched off while firing is no longer judged: its open incident resolves at the next pass, saying why,
with one "resolved" delivery, instead of staying open for ever."""

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Delivery, Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory


def test_disabling_a_firing_rule_resolves_its_open_incident_once(world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(10), seed=i, server_wait=1100.0)
    channel = NotificationChannelFactory()
    rule = AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])
    run_pass(at(-10))
    run_pass(at(0))

    rule.enabled = False
    rule.save()
    first, second = run_pass(at(1)), run_pass(at(2))

    assert (first.resolved, second.resolved) == (1, 0)
    incident = Incident.objects.get()
    assert incident.resolved_at == at(1)
    assert incident.events.get(kind="resolved").detail == "the rule was disabled"
    assert Delivery.objects.filter(transition="resolved").count() == 1
    assert AlertState.objects.get(rule=rule).status == AlertState.OK
