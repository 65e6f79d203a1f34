"""A channel whose URL leads to a loopback, link-local, private or otherwise internal address is refused
when saved, with the rule it breaks and the setting that lifts it, never the URL; nothing is stored. The
address is the one the service would connect to: the URL's host, or a mail relay named in the query.
LATENCY_NOTIFY_ALLOW_PRIVATE=true lets the same URL in; a public address is let in."""

from __future__ import annotations

import pytest

from probes.alerts.models import NotificationChannel
from tests.alerts_addresses.conftest import add_channel

SECRET = "TOKENSECRET4527"
LOOPBACK = "a loopback address (127.0.0.0/8, ::1)"
LINK_LOCAL = "a link-local address (169.254.0.0/16, fe80::/10)"
PRIVATE = "a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7)"

REFUSED = [
    (f"json://169.254.169.254/latest/meta-data/iam/{SECRET}", LINK_LOCAL),
    (f"json://[fe80::1]/{SECRET}", LINK_LOCAL),
    (f"json://127.0.0.1:6379/{SECRET}", LOOPBACK),
    (f"jsons://[::1]/{SECRET}", LOOPBACK),
    (f"json://localhost:8000/{SECRET}", LOOPBACK),
    (f"json://10.1.2.3/{SECRET}", PRIVATE),
    (f"json://172.20.0.5/{SECRET}", PRIVATE),
    (f"json://192.168.1.1/{SECRET}", PRIVATE),
    (f"json://[fd12:3456::1]/{SECRET}", PRIVATE),
    (f"json://0.0.0.0/{SECRET}", "the unspecified address (0.0.0.0, ::)"),
    (f"json://224.0.0.251/{SECRET}", "a multicast address"),
    (f"json://240.0.0.1/{SECRET}", "a reserved address"),
    (f"json://100.64.0.1/{SECRET}", "an address that is not publicly routable"),
    # IPv4 inside IPv6: mapped, 6to4, NAT64.
    (f"json://[::ffff:169.254.169.254]/{SECRET}", LINK_LOCAL),
    (f"json://[2002:7f00:1::1]/{SECRET}", LOOPBACK),
    (f"json://[64:ff9b::a9fe:a9fe]/{SECRET}", LINK_LOCAL),
    # A mail relay named in the query: the domain is public, the server Apprise connects to is not.
    (f"mailto://alerts:{SECRET}@example.com?smtp=127.0.0.1&from=alerts@example.com", LOOPBACK),
]


@pytest.mark.parametrize(("url", "rule"), REFUSED)
def test_the_form_refuses_the_url_naming_the_rule_and_the_setting(admin_client, url, rule):
    answer = add_channel(admin_client, url)

    assert answer.status_code == 200
    page = answer.content.decode()
    assert f"Refused: the channel leads to {rule}, and notifications go only to public addresses" in page
    assert "LATENCY_NOTIFY_ALLOW_PRIVATE=true" in page
    assert SECRET not in page
    assert not NotificationChannel.objects.exists()


def test_allowing_private_addresses_lets_the_same_url_in(admin_client, settings):
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = True

    answer = add_channel(admin_client, f"json://169.254.169.254/latest/meta-data/iam/{SECRET}")

    assert answer.status_code == 302
    assert NotificationChannel.objects.get().service == "json"


def test_a_public_address_is_let_in(admin_client):
    # Checked without connecting: the check refuses every connection once its address is checked.
    answer = add_channel(admin_client, f"json://93.184.216.34/{SECRET}")

    assert answer.status_code == 302
    assert NotificationChannel.objects.get().service == "json"
