"""In the admin a channel's URL is write-only: a new channel needs one; editing the channel with the
field left empty keeps the stored URL, a new one replaces it (and its service). "Send test
notification" (the list's action, the channel page's button: a POST with CSRF) sends to the channel
and says so; to a channel that is down it says why, without the URL, and counts the failure in the
channel's health."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from probes.alerts.models import NotificationChannel
from probes.alerts.secrets import decrypt_url
from tests.factories import NotificationChannelFactory


def change(admin_client, channel, **fields):
    data = {"name": channel.name, "apprise_url": "", "enabled": "on", **fields}
    return admin_client.post(reverse("admin:probes_notificationchannel_change", args=[channel.pk]), data)


def send_test(admin_client, channel) -> str:
    answer = admin_client.post(
        reverse("admin:probes_notificationchannel_changelist"),
        {"action": "send_test_notification", "_selected_action": [channel.pk]},
        follow=True,
    )
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_new_channel_needs_a_url(admin_client):
    answer = admin_client.post(reverse("admin:probes_notificationchannel_add"), {"name": "Ops", "enabled": "on"})

    assert "A new channel needs its Apprise URL." in answer.content.decode()
    assert not NotificationChannel.objects.exists()


def test_an_empty_field_keeps_the_url_and_a_new_one_replaces_it(admin_client, json_receiver, smtp_receiver):
    channel = NotificationChannelFactory(name="Ops", url=json_receiver.apprise_url("/alerts"))
    stored = channel.apprise_url

    assert change(admin_client, channel, name="Ops hook").status_code == 302
    channel.refresh_from_db()
    assert (channel.name, channel.apprise_url, channel.service) == ("Ops hook", stored, "json")

    assert change(admin_client, channel, apprise_url=smtp_receiver.apprise_url()).status_code == 302
    channel.refresh_from_db()
    assert channel.service == "mailto" and decrypt_url(channel.apprise_url) == smtp_receiver.apprise_url()

    page = send_test(admin_client, channel)
    assert "Sent a test notification to “Ops hook” (mailto)." in page
    (mail,) = smtp_receiver.wait_for_messages(1)
    assert mail.subject == "Latency Atlas: test notification"


def test_a_test_to_a_channel_that_is_down_says_why(admin_client, json_receiver):
    url = json_receiver.apprise_url("/hook/TOKENSECRET123")
    channel = NotificationChannelFactory(name="Ops", url=url)
    json_receiver.fail_next(1, status=503)

    page = send_test(admin_client, channel)

    assert "The test notification to “Ops” (json) failed: Failed to send JSON POST notification" in page
    assert "503" in page and "TOKENSECRET123" not in page and url not in page
    channel.refresh_from_db()
    assert channel.consecutive_failures == 1 and "503" in channel.last_error


def test_the_channel_page_has_a_send_test_button_that_posts_with_csrf(admin_client, admin_user, json_receiver):
    channel = NotificationChannelFactory(name="Ops", url=json_receiver.apprise_url("/alerts"))
    button = reverse("admin:probes_notificationchannel_send_test", args=[channel.pk])
    page = admin_client.get(reverse("admin:probes_notificationchannel_change", args=[channel.pk])).content.decode()
    assert f'action="{button}"' in page

    assert admin_client.get(button).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user)
    assert strict.post(button).status_code == 403
    assert json_receiver.posts == []

    answer = admin_client.post(button, follow=True)
    assert "Sent a test notification to “Ops” (json)." in answer.content.decode()
    (post,) = json_receiver.wait_for_posts(1)
    assert post.body["title"] == "Latency Atlas: test notification"
