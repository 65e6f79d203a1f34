"""A channel's URL holds its secrets (here a user, a password, a token in the path and a header
value in the query). Entered in the admin, it never comes back: not in the channel's page or the
list, not in any log line (DEBUG included) across failed and successful deliveries and a test
send, not on the incident's timeline, not in the delivery's or the channel's last error, and
nowhere in the database, where the column holds a ciphertext. The reasons of the failures are
still there, with the URL's parts replaced by ***.

Apprise itself logs URLs (a refused one whole, at ERROR): its logger writes nowhere
(settings.LOGGING), and what our code logs is checked. pytest's caplog also listens to loggers
that do not propagate, so the apprise records it holds are left out of the check and the
configuration that silences them is checked instead."""

from __future__ import annotations

import logging

from django.conf import settings
from django.urls import reverse

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent, NotificationChannel
from probes.alerts.secrets import decrypt_url
from tests.alerts_notify.conftest import make_delivery
from tests.trust.conftest import every_stored_text

SECRETS = ("bob-the-user", "PASSWORDSECRET", "TOKENSECRET123", "HEADERSECRET")


def secret_url(receiver) -> str:
    return receiver.apprise_url(
        "/hook/TOKENSECRET123", user="bob-the-user", password="PASSWORDSECRET", query="+X-Token=HEADERSECRET"
    )


def leaks(text: str, url: str) -> list[str]:
    return [secret for secret in (url, *SECRETS) if secret.lower() in text.lower()]


def logged(caplog) -> str:
    """What the site's logging writes of the captured records: all but Apprise's own."""
    assert settings.LOGGING["loggers"]["apprise"] == {"handlers": ["nowhere"], "level": "DEBUG", "propagate": False}
    assert settings.LOGGING["handlers"]["nowhere"] == {"class": "logging.NullHandler"}
    return "\n".join(
        f"{r.name} {r.getMessage()}"
        for r in caplog.records
        if r.name != "apprise" and not r.name.startswith("apprise.")
    )


def test_the_url_is_nowhere_but_in_the_ciphertext(admin_client, json_receiver, caplog):
    caplog.set_level(logging.DEBUG)
    url = secret_url(json_receiver)
    added = admin_client.post(
        reverse("admin:probes_notificationchannel_add"),
        {"name": "Ops webhook", "apprise_url": url, "enabled": "on"},
    )
    assert added.status_code == 302, added.content.decode()
    channel = NotificationChannel.objects.get(name="Ops webhook")
    assert channel.service == "json"
    assert channel.apprise_url != url and decrypt_url(channel.apprise_url) == url
    pages = "".join(
        admin_client.get(page).content.decode()
        for page in (
            reverse("admin:probes_notificationchannel_changelist"),
            reverse("admin:probes_notificationchannel_change", args=[channel.pk]),
            reverse("admin:probes_notificationchannel_history", args=[channel.pk]),
        )
    )
    assert "Ops webhook" in pages and leaks(pages, url) == []

    delivery = make_delivery(url, channel=channel)
    json_receiver.fail_next(1, status=503)
    failed = []
    for _ in range(2):
        try:
            notify.deliver(delivery.pk)
        except notify.NotificationFailed as failure:
            failed.append(str(failure))
        json_receiver.down()
    json_receiver.up()
    assert notify.deliver(delivery.pk) == notify.SENT
    tested = admin_client.post(
        reverse("admin:probes_notificationchannel_changelist"),
        {"action": "send_test_notification", "_selected_action": [channel.pk]},
        follow=True,
    )
    assert "Sent a test notification to “Ops webhook” (json)." in tested.content.decode()
    assert len(json_receiver.posts) == 3  # the 503, the delivery, the test

    # The reasons are kept, scrubbed.
    assert len(failed) == 2 and "503" in failed[0] and "***" in failed[1]
    events = IncidentEvent.objects.filter(incident=delivery.incident)
    assert [e.kind for e in events.order_by("id")] == ["notification_failed", "notification_failed", "notified"]
    delivery.refresh_from_db()
    channel.refresh_from_db()
    assert delivery.state == Delivery.SENT and channel.last_error
    stored = every_stored_text()
    assert channel.apprise_url in stored
    delivery_pages = "".join(
        admin_client.get(page).content.decode()
        for page in (
            reverse("admin:probes_delivery_changelist"),
            reverse("admin:probes_delivery_change", args=[delivery.pk]),
            reverse("admin:probes_notificationchannel_change", args=[channel.pk]),
        )
    )
    assert "Ops webhook" in delivery_pages
    for text in (
        delivery_pages,
        logged(caplog),
        "\n".join(e.detail for e in events),
        delivery.last_error,
        channel.last_error,
        stored,
        tested.content.decode(),
    ):
        assert leaks(text, url) == []
    assert "failed (attempt 1 of 6)" in logged(caplog)  # our log lines are there, scrubbed


def test_a_url_apprise_refuses_is_named_by_its_service_only(admin_client, caplog):
    caplog.set_level(logging.DEBUG)
    url = "slack://TOKENSECRET123"  # a Slack URL needs three tokens

    refused = admin_client.post(
        reverse("admin:probes_notificationchannel_add"), {"name": "Ops Slack", "apprise_url": url, "enabled": "on"}
    )

    page = refused.content.decode()
    assert refused.status_code == 200
    assert "Apprise does not understand this slack:// URL" in page
    assert leaks(page, url) == [] and leaks(logged(caplog), url) == []
    assert not NotificationChannel.objects.exists()


def test_scrub_removes_the_url_and_each_of_its_parts():
    url = "json://bob-the-user:PASS%21WORD@hooks.example.com:8443/hook/TOKENSECRET123?+X-Token=HEADERSECRET&to=a"
    text = (
        f"could not load {url}; user bob-the-user, password PASS!WORD, host hooks.example.com port 8443, "
        "path /hook/TOKENSECRET123, header HEADERSECRET, recipient a"
    )

    scrubbed = notify.scrub(text, url)

    for part in ("bob-the-user", "PASS!WORD", "PASS%21WORD", "hooks.example.com", "8443", "TOKENSECRET123"):
        assert part not in scrubbed
    assert "HEADERSECRET" not in scrubbed and "recipient ***" in scrubbed
    assert scrubbed.startswith("could not load ***")
