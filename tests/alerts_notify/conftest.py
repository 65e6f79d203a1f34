"""Fixtures of the notification tests: an incident of two regions with one delivery to a channel.

Every channel here leads to loopback (the receivers, or port 9 where nothing listens), which the address
policy refuses (probes.alerts.addresses): these tests allow private addresses, in this process by the
fixture below and in the worker processes they start by LATENCY_NOTIFY_ALLOW_PRIVATE=true in their
environment. tests/alerts_addresses proves the refusals with it off."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.alerts.models import Delivery
from tests.factories import IncidentFactory, NotificationChannelFactory, RegionFactory, TargetFactory

STARTED = datetime(2026, 11, 30, 21, 40, tzinfo=UTC)
SUMMARY = (
    "TTFT p95 from Lagos and Nairobi to gpt-eu is 2.3x its 7-day baseline (1.9 s against 820 ms) for 10 min; "
    "TCP connect unchanged, server wait +1.1 s: queueing at the provider, not the network. 2 of 15 regions: regional."
)


@pytest.fixture(autouse=True)
def private_addresses_allowed(settings):
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = True


def make_incident(**overrides):
    regions = [RegionFactory(slug="lagos", name="Lagos"), RegionFactory(slug="nairobi", name="Nairobi")]
    fields = {
        "rule__name": "TTFT p95 over 1 s",
        "target": TargetFactory(name="gpt-eu"),
        "started_at": STARTED,
        "opened_at": STARTED + timedelta(minutes=10),
        "summary": SUMMARY,
        "regions": regions,
        **overrides,
    }
    return IncidentFactory(**fields)


def make_delivery(url: str, *, transition: str = Delivery.OPENED, incident=None, channel=None) -> Delivery:
    return Delivery.objects.create(
        incident=incident or make_incident(),
        transition=transition,
        channel=channel or NotificationChannelFactory(name="Ops webhook", url=url),
        created_at=datetime.now(UTC),
    )


@pytest.fixture
def delivery_to(db):
    """`delivery_to(url, transition=..., incident=..., channel=...)`: a pending Delivery of an incident
    (rule "TTFT p95 over 1 s", target gpt-eu, regions Lagos and Nairobi) to a channel with that URL."""
    return make_delivery
