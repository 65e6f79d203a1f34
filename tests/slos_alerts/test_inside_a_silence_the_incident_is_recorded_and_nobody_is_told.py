"""A silence (maintenance) of the objective's target: the burn-rate incident still opens and resolves, marked
silenced, but its deliveries are withheld, opening and resolution alike, and the timeline says why. A silence of
another target changes nothing."""

from __future__ import annotations

from probes.models import Delivery, Incident, IncidentEvent
from tests.factories import NotificationChannelFactory, SilenceFactory
from tests.slos_alerts.conftest import at


def burning(scene):
    lagos = scene.regions[0]
    scene.objective.channels.set([NotificationChannelFactory()])
    scene.calls(lagos, at(-60), at(-5), good=140, bad=40)
    scene.calls(lagos, at(-5), at(0), good=15, bad=5)
    scene.calls(lagos, at(0), at(10), good=20, bad=0)
    scene.count()
    scene.quiet_hours(lagos, good=2000)


def test_a_silence_of_the_objectives_target_withholds_every_notification(scene):
    burning(scene)
    SilenceFactory(target=scene.target, starts_at=at(-60), ends_at=at(60), reason="provider maintenance")

    assert scene.run(0).opened == 1
    assert scene.run(10).resolved == 1

    incident = Incident.objects.get()
    assert incident.silenced and incident.resolved_at == at(10)
    assert list(Delivery.objects.values_list("state", flat=True)) == [Delivery.WITHHELD, Delivery.WITHHELD]
    kinds = list(incident.events.values_list("kind", flat=True))
    assert kinds == ["opened", "withheld", "resolved", "withheld"]
    assert "provider maintenance" in incident.events.filter(kind=IncidentEvent.WITHHELD).first().detail


def test_a_silence_of_another_target_changes_nothing(scene):
    burning(scene)
    SilenceFactory(starts_at=at(-60), ends_at=at(60))

    scene.run(0)

    assert not Incident.objects.get().silenced
    assert list(Delivery.objects.values_list("state", flat=True)) == [Delivery.PENDING]
