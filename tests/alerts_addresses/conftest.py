"""The address policy of notification channels (probes.alerts.addresses) with its default: private
addresses refused. The receivers (tests/conftest.py) and the DNS server (devtools/dns_server.py) are on
loopback, so whatever reaches them got past the policy."""

from __future__ import annotations

import pytest
from django.urls import reverse


@pytest.fixture(autouse=True)
def private_addresses_refused(settings):
    # The default, said out loud: these tests are about it.
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = False
    settings.LATENCY_NOTIFY_DNS_SERVERS = []


@pytest.fixture
def dns_server(settings):
    """A DNS server on loopback that LATENCY_NOTIFY_DNS_SERVERS points at; `dns_server.answer(name, ip)`."""
    from devtools.dns_server import DnsServer

    with DnsServer() as server:
        settings.LATENCY_NOTIFY_DNS_SERVERS = [server.address]
        yield server


def add_channel(admin_client, url: str, name: str = "Ops"):
    """The admin's "add notification channel" form, posted."""
    return admin_client.post(
        reverse("admin:probes_notificationchannel_add"), {"name": name, "apprise_url": url, "enabled": "on"}
    )


def send_test(admin_client, channel) -> str:
    """The channel list's "Send test notification" action; the page it leads to."""
    answer = admin_client.post(
        reverse("admin:probes_notificationchannel_changelist"),
        {"action": "send_test_notification", "_selected_action": [channel.pk]},
        follow=True,
    )
    assert answer.status_code == 200
    return answer.content.decode()
