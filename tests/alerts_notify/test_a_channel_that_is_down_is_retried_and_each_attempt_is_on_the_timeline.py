"""A channel that is down (its receiver answers 503, then its port is closed): each attempt fails
into the incident's timeline with the reason and the attempt number, the delivery goes back to
pending for the retry, the channel counts its failures and, from LATENCY_CHANNEL_FAILING_AFTER on,
is flagged "failing" in the admin's list. When the receiver is back, the next attempt is sent and
the count is reset. A delivery whose every attempt fails is failed for good after the last."""

from __future__ import annotations

import pytest
from django.urls import reverse

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent


def failing_attempt(delivery_id: int) -> str:
    with pytest.raises(notify.NotificationFailed) as failed:
        notify.deliver(delivery_id)
    return str(failed.value)


def test_each_failed_attempt_is_on_the_timeline_and_the_channel_is_flagged_then_recovers(
    delivery_to, json_receiver, admin_client, settings
):
    settings.LATENCY_CHANNEL_FAILING_AFTER = 3
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))
    channel = delivery.channel
    json_receiver.fail_next(2, status=503)

    assert "503" in failing_attempt(delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.claimed_until) == (Delivery.PENDING, 1, None)
    assert "503" in delivery.last_error
    assert "503" in failing_attempt(delivery.pk)
    json_receiver.down()
    closed = failing_attempt(delivery.pk)
    assert "A Connection error occurred" in closed and "Connection refused" in closed

    events = list(IncidentEvent.objects.filter(incident=delivery.incident).order_by("at", "id"))
    assert [(e.kind, e.attempt, e.channel) for e in events] == [
        (IncidentEvent.NOTIFICATION_FAILED, n, channel) for n in (1, 2, 3)
    ]
    assert all(
        e.detail.startswith(f"Attempt {e.attempt} to “Ops webhook” (json) failed, to be retried:") for e in events
    )
    channel.refresh_from_db()
    assert channel.consecutive_failures == 3 and channel.failing
    assert channel.last_failure_at is not None and channel.last_error

    listing = admin_client.get(reverse("admin:probes_notificationchannel_changelist")).content.decode()
    assert 'class="channel-failing">failing<' in listing

    json_receiver.up()
    assert notify.deliver(delivery.pk) == notify.SENT
    assert len(json_receiver.wait_for_posts(3)) == 3  # two answered 503, the last accepted
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.SENT, 4)
    last = IncidentEvent.objects.filter(incident=delivery.incident).latest("id")
    assert (last.kind, last.attempt) == (IncidentEvent.NOTIFIED, 4)
    channel.refresh_from_db()
    assert channel.consecutive_failures == 0 and not channel.failing
    listing = admin_client.get(reverse("admin:probes_notificationchannel_changelist")).content.decode()
    assert "channel-failing" not in listing


def test_a_delivery_is_failed_for_good_after_the_last_attempt(delivery_to, json_receiver):
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))
    json_receiver.fail_next(notify.MAX_ATTEMPTS, status=500)

    for _ in range(notify.MAX_ATTEMPTS - 1):
        failing_attempt(delivery.pk)
    assert notify.deliver(delivery.pk) == notify.FAILED

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.FAILED, notify.MAX_ATTEMPTS)
    last = IncidentEvent.objects.filter(incident=delivery.incident).latest("id")
    assert last.detail.startswith(f"Attempt {notify.MAX_ATTEMPTS} to “Ops webhook” (json) failed, the last one:")
    assert notify.deliver(delivery.pk) == notify.SKIPPED  # a late duplicate task sends nothing
    assert len(json_receiver.posts) == notify.MAX_ATTEMPTS


def test_a_channel_url_that_cannot_be_decrypted_fails_at_once_with_the_reason(delivery_to, json_receiver, settings):
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))
    settings.SECRET_KEY = "another site's key, not the one the URL was stored under"

    assert notify.deliver(delivery.pk) == notify.FAILED

    delivery.refresh_from_db()
    assert delivery.state == Delivery.FAILED and delivery.attempts == 1
    assert "cannot be decrypted" in delivery.last_error
    assert json_receiver.posts == []
    delivery.channel.refresh_from_db()
    assert delivery.channel.consecutive_failures == 1
