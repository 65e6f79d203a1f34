"""The objective's channel is a real Apprise json:// webhook on loopback: the page arrives titled [PAGE] with the
objective's name, the target it is filed under and the summary naming the burn; the resolution arrives as
[RESOLVED]. Both are on the timeline as sent."""

from __future__ import annotations

import pytest

from probes.alerts import notify
from probes.models import Delivery, Incident, IncidentEvent
from tests.factories import NotificationChannelFactory
from tests.slos_alerts.conftest import at


@pytest.fixture(autouse=True)
def private_addresses_allowed(settings):
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = True


def test_the_page_and_its_resolution_reach_the_webhook(scene, json_receiver, settings):
    settings.LATENCY_SITE_URL = "https://atlas.example.com"
    lagos = scene.regions[0]
    scene.objective.channels.set(
        [NotificationChannelFactory(name="Ops webhook", url=json_receiver.apprise_url("/slo"))]
    )
    scene.calls(lagos, at(-60), at(-5), good=140, bad=40)
    scene.calls(lagos, at(-5), at(0), good=15, bad=5)
    scene.calls(lagos, at(0), at(10), good=20, bad=0)
    scene.count()
    scene.quiet_hours(lagos, good=2000)

    scene.run(0)
    incident = Incident.objects.get()
    opened = Delivery.objects.get(transition=Delivery.OPENED)
    assert notify.deliver(opened.pk) == notify.SENT

    (post,) = json_receiver.wait_for_posts(1)
    assert post.path == "/slo"
    assert post.body["title"] == "[PAGE] chat 99: gpt-eu (global)"
    assert post.body["message"].startswith("Objective “chat 99” burns its error budget at 22.5x over 1 h")
    assert "Regions: Lagos (test)" in post.body["message"]
    assert f"Incident: https://atlas.example.com/incidents/{incident.pk}/" in post.body["message"]
    assert post.body["type"] == "failure"

    scene.run(10)
    resolved = Delivery.objects.get(transition=Delivery.RESOLVED)
    assert notify.deliver(resolved.pk) == notify.SENT
    posts = json_receiver.wait_for_posts(2)
    assert posts[1].body["title"] == "[RESOLVED] chat 99: gpt-eu (global)"
    assert posts[1].body["type"] == "success"
    sent = incident.events.filter(kind=IncidentEvent.NOTIFIED).values_list("detail", flat=True)
    assert list(sent) == ["Sent to “Ops webhook” (json).", "Sent to “Ops webhook” (json)."]
