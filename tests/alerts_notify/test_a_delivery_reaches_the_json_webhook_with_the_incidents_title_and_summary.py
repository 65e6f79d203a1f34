"""A delivery of an incident's opening reaches a real JSON webhook (Apprise's json://) with the
rule, target, scope, summary, regions, start time and the incident's absolute link, as Apprise's `failure`
type; the delivery is sent, the timeline says so naming the channel, and the channel's health is good. The
resolution reads [RESOLVED] and is of the `success` type."""

from __future__ import annotations

from datetime import timedelta

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent
from tests.alerts_notify.conftest import STARTED, SUMMARY, make_incident


def test_the_opening_reaches_the_webhook_with_title_and_summary(delivery_to, json_receiver, settings):
    settings.LATENCY_SITE_URL = "https://atlas.example.com"
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))

    assert notify.deliver(delivery.pk) == notify.SENT

    (post,) = json_receiver.wait_for_posts(1)
    assert post.path == "/alerts"
    assert post.body["title"] == "[FIRING] TTFT p95 over 1 s: gpt-eu (regional)"
    message = post.body["message"]
    assert message.startswith(SUMMARY)
    assert "Regions: Lagos, Nairobi" in message
    assert "Started: 2026-11-30 21:40 UTC" in message
    assert f"Incident: https://atlas.example.com/incidents/{delivery.incident.pk}/" in message
    assert post.body["type"] == "failure"

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.last_error) == (Delivery.SENT, 1, "")
    assert delivery.sent_at is not None
    (event,) = IncidentEvent.objects.filter(incident=delivery.incident)
    assert (event.kind, event.channel, event.attempt) == (IncidentEvent.NOTIFIED, delivery.channel, 1)
    assert event.detail == "Sent to “Ops webhook” (json)."
    delivery.channel.refresh_from_db()
    assert delivery.channel.consecutive_failures == 0 and delivery.channel.last_success_at is not None


def test_the_resolution_reads_resolved_with_both_times(delivery_to, json_receiver):
    incident = make_incident(resolved_at=STARTED + timedelta(minutes=45), scope="global")
    delivery = delivery_to(json_receiver.apprise_url("/alerts"), transition=Delivery.RESOLVED, incident=incident)

    assert notify.deliver(delivery.pk) == notify.SENT

    (post,) = json_receiver.wait_for_posts(1)
    assert post.body["title"] == "[RESOLVED] TTFT p95 over 1 s: gpt-eu (global)"
    assert "Started: 2026-11-30 21:40 UTC" in post.body["message"]
    assert "Resolved: 2026-11-30 22:25 UTC" in post.body["message"]
    assert post.body["type"] == "success"
