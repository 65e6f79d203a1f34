"""A notification to a channel that leads to an internal address is not sent, and not retried: no retry
changes an address. The attempt is the last one, failed, on the incident's timeline with the rule and the
setting (not the URL), and counted in the channel's health."""

from __future__ import annotations

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent
from tests.alerts_notify.conftest import make_delivery


def test_the_delivery_fails_for_good_at_the_first_attempt(db, json_receiver):
    url = json_receiver.apprise_url("/alerts/TOKENSECRET4527")
    delivery = make_delivery(url)

    assert notify.deliver(delivery.pk) == notify.FAILED

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.FAILED, 1)
    event = IncidentEvent.objects.get(kind=IncidentEvent.NOTIFICATION_FAILED)
    assert event.detail.startswith(
        "Attempt 1 to “Ops webhook” (json) failed, the last one: refused: the channel leads to a loopback address"
    )
    assert "LATENCY_NOTIFY_ALLOW_PRIVATE=true" in event.detail
    assert "TOKENSECRET4527" not in event.detail and "TOKENSECRET4527" not in delivery.last_error
    assert delivery.channel.__class__.objects.get(pk=delivery.channel_id).consecutive_failures == 1
    assert json_receiver.posts == []
    # A second run has nothing to send.
    assert notify.deliver(delivery.pk) == notify.SKIPPED
    assert json_receiver.posts == []
