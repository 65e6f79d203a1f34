"""Inside a silence (a maintenance window of the target) the incident is recorded, marked silenced, and its
deliveries are withheld, opening and resolution alike; the timeline says why."""

from probes.alerts.evaluate import run_pass
from probes.models import Delivery, Incident, IncidentEvent
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory, SilenceFactory


def test_a_silence_withholds_every_notification_but_keeps_the_incident(world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
        world.calls(region, at(0), at(30), seed=5 + i)
    channel = NotificationChannelFactory()
    AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])
    SilenceFactory(target=world.target, starts_at=at(-60), ends_at=at(5), reason="provider maintenance")

    for minute in (-10, 0, 10, 20):
        run_pass(at(minute))

    incident = Incident.objects.get()
    assert incident.silenced and incident.resolved_at == at(20)
    assert set(Delivery.objects.values_list("state", flat=True)) == {Delivery.WITHHELD}
    assert Delivery.objects.count() == 2
    kinds = list(incident.events.values_list("kind", flat=True))
    assert kinds == ["opened", "withheld", "resolved", "withheld"]
    assert "provider maintenance" in incident.events.get(kind=IncidentEvent.WITHHELD, at=at(0)).detail


def test_a_silence_of_another_target_changes_nothing(world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
    channel = NotificationChannelFactory()
    AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])
    SilenceFactory(starts_at=at(-60), ends_at=at(60))

    run_pass(at(-10))
    run_pass(at(0))

    assert not Incident.objects.get().silenced
    assert list(Delivery.objects.values_list("state", flat=True)) == [Delivery.PENDING]
