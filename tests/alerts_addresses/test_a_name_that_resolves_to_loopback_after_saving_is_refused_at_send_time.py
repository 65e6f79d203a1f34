"""DNS rebinding: a channel's host name resolves to a public address when the channel is saved, and to
127.0.0.1 when a notification is sent. The send checks the address again, after resolving, and refuses;
nothing reaches the receiver listening there. The names are resolved by a DNS server on loopback that the
test controls (LATENCY_NOTIFY_DNS_SERVERS), and the socket connects to the address that was checked: with
private addresses allowed, the same name reaches the receiver through that answer alone."""

from __future__ import annotations

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent, NotificationChannel
from tests.alerts_addresses.conftest import add_channel
from tests.alerts_notify.conftest import make_delivery

NAME = "hooks.rebinding.example"
PUBLIC = "93.184.216.34"


def test_the_name_passes_when_saved_and_is_refused_when_it_points_at_loopback(admin_client, dns_server, json_receiver):
    dns_server.answer(NAME, PUBLIC)
    assert add_channel(admin_client, f"json://{NAME}:{json_receiver.port}/alerts").status_code == 302
    assert (NAME.lower(), "A") in dns_server.queries
    channel = NotificationChannel.objects.get()

    dns_server.answer(NAME, "127.0.0.1")
    asked = len(dns_server.queries)
    delivery = make_delivery("", channel=channel)

    assert notify.deliver(delivery.pk) == notify.FAILED
    assert len(dns_server.queries) > asked  # resolved again at send time
    delivery.refresh_from_db()
    assert delivery.state == Delivery.FAILED
    event = IncidentEvent.objects.get(kind=IncidentEvent.NOTIFICATION_FAILED)
    assert "refused: the channel leads to a loopback address" in event.detail
    assert json_receiver.posts == []


def test_the_connection_goes_to_the_address_the_dns_server_gave(db, settings, dns_server, json_receiver):
    # Nothing but the test's DNS server knows the name: a POST at the receiver shows the socket connected to
    # the address resolved (and checked) there.
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = True
    dns_server.answer(NAME, "127.0.0.1")
    delivery = make_delivery(f"json://{NAME}:{json_receiver.port}/alerts")

    assert notify.deliver(delivery.pk) == notify.SENT

    (post,) = json_receiver.wait_for_posts(1)
    assert post.path == "/alerts"
