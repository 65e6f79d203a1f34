"""The same pass run twice at the same moment (a retried task, a backfill over a live pass) opens one incident
with one delivery per channel."""

from probes.alerts.evaluate import run_pass
from probes.models import Delivery, Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory


def test_evaluating_the_same_moment_twice_opens_one_incident_and_one_delivery(world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
    channel = NotificationChannelFactory()
    AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])

    run_pass(at(-10))
    first, second = run_pass(at(0)), run_pass(at(0))

    assert (first.opened, second.opened) == (1, 0)
    assert Incident.objects.count() == 1
    assert Delivery.objects.count() == 1
