"""A breach that ends: the incident stays open while the condition has been clear for less than a window, then
resolves once, with one "resolved" delivery per channel; later passes change nothing."""

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Delivery, Incident, IncidentEvent
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory


def test_the_incident_resolves_once_the_condition_has_been_clear_for_a_window(world):
    frankfurt = world.regions[2]
    world.baseline_week()
    for i, region in enumerate(world.regions):
        slow = region is not frankfurt
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0 if slow else 0.0)
        world.calls(region, at(0), at(30), seed=10 + i)
    channel = NotificationChannelFactory()
    rule = AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])

    run_pass(at(-10))
    assert run_pass(at(0)).opened == 1
    assert run_pass(at(10)).resolved == 0  # clear since +10: clearing, still open
    assert AlertState.objects.get(rule=rule).status == AlertState.CLEARING
    assert Incident.objects.get().resolved_at is None

    assert run_pass(at(20)).resolved == 1
    assert run_pass(at(21)).resolved == 0

    incident = Incident.objects.get()
    assert incident.resolved_at == at(20)
    assert list(incident.events.values_list("kind", flat=True)) == [IncidentEvent.OPENED, IncidentEvent.RESOLVED]
    deliveries = sorted(incident.deliveries.values_list("transition", "state", "channel_id"))
    assert deliveries == [("opened", Delivery.PENDING, channel.id), ("resolved", Delivery.PENDING, channel.id)]
    assert AlertState.objects.get(rule=rule).status == AlertState.OK
