""" "Send test notification" to a channel that leads to an internal address (one stored before the policy,
or by a setting since changed) says it was refused, naming the rule and the setting and not the URL, counts
the failure in the channel's health, and nothing reaches the receiver."""

from __future__ import annotations

from tests.alerts_addresses.conftest import send_test
from tests.factories import NotificationChannelFactory


def test_the_test_is_refused_and_the_receiver_gets_nothing(admin_client, json_receiver):
    url = json_receiver.apprise_url("/hook/TOKENSECRET4527")
    channel = NotificationChannelFactory(name="Ops", url=url)

    page = send_test(admin_client, channel)

    assert "The test notification to “Ops” (json) failed: refused: the channel leads to a loopback address" in page
    assert "LATENCY_NOTIFY_ALLOW_PRIVATE=true" in page
    assert "TOKENSECRET4527" not in page and url not in page
    assert json_receiver.posts == []
    channel.refresh_from_db()
    assert channel.consecutive_failures == 1 and channel.last_error.startswith("refused: the channel leads to")


def test_an_email_to_a_relay_on_loopback_is_refused(admin_client, smtp_receiver):
    channel = NotificationChannelFactory(name="Ops mail", url=smtp_receiver.apprise_url(to="oncall@example.com"))

    page = send_test(admin_client, channel)

    assert "The test notification to “Ops mail” (mailto) failed: refused: the channel leads to a loopback" in page
    assert smtp_receiver.messages == []
