"""Hysteresis: a condition that holds for less than a window opens nothing, and a firing rule that clears for
less than a window and comes back stays one incident with one notification."""

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Delivery, Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory


def test_a_breach_shorter_than_the_window_opens_nothing(world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-40), at(-20), seed=i)
        world.calls(region, at(-20), at(-12), seed=3 + i, server_wait=1100.0)  # eight slow minutes
        world.calls(region, at(-12), at(10), seed=5 + i)
    # The median breaches while most of a window's calls are slow: from -14 to -8, six minutes.
    rule = AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, percentile="p50")

    reports = [run_pass(at(minute)) for minute in range(-20, 11)]

    assert sum(r.moved for r in reports) == 2  # ok -> pending -> ok
    assert sum(r.opened for r in reports) == 0
    assert not Incident.objects.exists()
    assert AlertState.objects.get(rule=rule).status == AlertState.OK


def test_a_firing_rule_that_clears_briefly_stays_one_incident_and_notifies_once(world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
        world.calls(region, at(0), at(5), seed=5 + i)  # five quiet minutes
        world.calls(region, at(5), at(30), seed=9 + i, server_wait=1100.0)
    channel = NotificationChannelFactory()
    rule = AlertRuleFactory(
        target=world.target, threshold_ms=1500.0, min_regions=2, percentile="p50", channels=[channel]
    )

    passes = [run_pass(at(minute)) for minute in range(-10, 21)]

    assert sum(r.opened for r in passes) == 1 and sum(r.resolved for r in passes) == 0
    assert Incident.objects.count() == 1
    assert Delivery.objects.filter(channel=channel).count() == 1
    assert AlertState.objects.get(rule=rule).status == AlertState.FIRING
