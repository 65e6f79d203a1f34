"""A channel that is an email address (Apprise's mailto:// to a plain SMTP server, no TLS, no
login) gets the incident as an email: the title is the subject, the summary the body."""

from __future__ import annotations

from probes.alerts import notify
from probes.alerts.models import Delivery
from tests.alerts_notify.conftest import SUMMARY


def test_the_incident_arrives_as_an_email(delivery_to, smtp_receiver):
    delivery = delivery_to(smtp_receiver.apprise_url(to="oncall@example.com", sender="atlas@example.com"))

    assert notify.deliver(delivery.pk) == notify.SENT

    (mail,) = smtp_receiver.wait_for_messages(1)
    assert mail.mail_from == "atlas@example.com"
    assert mail.rcpt_tos == ["oncall@example.com"]
    assert mail.subject == "[FIRING] TTFT p95 over 1 s: gpt-eu (regional)"
    assert SUMMARY in " ".join(mail.body.split())  # the body may be wrapped
    assert "Regions: Lagos, Nairobi" in mail.body
    delivery.refresh_from_db()
    assert delivery.state == Delivery.SENT
    delivery.channel.refresh_from_db()
    assert delivery.channel.service == "mailto"
