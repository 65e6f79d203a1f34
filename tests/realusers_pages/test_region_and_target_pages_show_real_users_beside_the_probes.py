"""The region and target pages' "Real users" panel: real users near the region's city beside the region's
probes and the fiber floor, in words and in a table; an empty state that says why (none received, or
every place under the minimum)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from probes.geo import path_floor_ms
from probes.models import Measurement
from tests.factories import IngestSourceFactory, MeasurementFactory
from tests.realusers_pages.support import IBADAN, LAGOS, LONDON, calls

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(make_region, make_target, make_probe):
    lagos = make_region(slug="lagos", name="Lagos", city="Lagos", country="NG", latitude=6.45, longitude=3.4)
    target = make_target(
        name="Gamma", url="https://api.example.com/v1/chat/completions", model="gpt-4o", latitude=50.11, longitude=8.68
    )
    probe = make_probe(target=target, regions=[lagos])
    now = timezone.now()
    Measurement.objects.bulk_create(
        MeasurementFactory.build(
            probe=probe, region=lagos, scheduled_for=now - timedelta(minutes=5 + i), ttft_ms=1700.0, total_ms=2500.0
        )
        for i in range(5)
    )
    return lagos, target, now


def test_the_region_page_says_what_users_near_it_see_beside_its_probe_and_the_floor(client, world, viewer):
    lagos, _target, now = world
    source = IngestSourceFactory()
    calls(source.id, 3, now - timedelta(minutes=20), LAGOS, ttft_ms=1900.0)
    calls(source.id, 3, now - timedelta(minutes=20), IBADAN, ttft_ms=1900.0)  # 120 km away: near Lagos too
    calls(source.id, 5, now - timedelta(minutes=20), LONDON, ttft_ms=300.0)  # far away: not in Lagos's panel

    page = client.get(f"/regions/{lagos.slug}/", {"window": "24h"}).content.decode()

    # Lagos and Ibadan have 3 calls each: under the minimum alone, neither is shown.
    assert "no place reached the minimum" not in page
    assert 'id="real-users-empty"' in page
    calls(source.id, 2, now - timedelta(minutes=10), LAGOS, ttft_ms=1900.0)
    calls(source.id, 2, now - timedelta(minutes=10), IBADAN, ttft_ms=1900.0)

    page = client.get(f"/regions/{lagos.slug}/", {"window": "24h"}).content.decode()
    # Lagos to Frankfurt, about 4,900 km: 49 ms round trip in fiber.
    floor = round(path_floor_ms(6.45, 3.4, 50.11, 8.68))
    assert 45 < floor < 55
    assert (
        f"Your users near Lagos see p50 TTFT 1.9 s; our Lagos probe sees 1.7 s; the fiber floor is {floor} ms." in page
    )
    assert "Ibadan, NG; Lagos, NG" in page
    assert "London" not in page.split('id="real-users"')[1]


def test_the_target_page_shows_its_real_users_by_region(client, world, viewer):
    _lagos, target, now = world
    calls(IngestSourceFactory().id, 5, now - timedelta(hours=30), LAGOS, ttft_ms=1900.0)
    page = client.get(f"/targets/{target.id}/").content.decode()
    panel = page.split('id="real-users"')[1]
    assert "Your users near Lagos see p50 TTFT 1.9 s; our Lagos probe sees 1.7 s" in panel
    assert 'id="real-users-table"' in panel


def test_the_panel_says_none_were_received(client, world, viewer):
    _lagos, target, _now = world
    page = client.get(f"/targets/{target.id}/").content.decode()
    assert "No real users&#x27; calls in the last 7 days: none received." in page


def test_the_panel_says_every_place_is_under_the_minimum(client, world, viewer, settings):
    settings.LATENCY_REAL_USERS_MIN_SAMPLES = 10
    lagos, _target, now = world
    calls(IngestSourceFactory().id, 9, now - timedelta(minutes=30), LAGOS)
    page = client.get(f"/regions/{lagos.slug}/").content.decode()
    assert "no place reached the minimum of 10 calls, so none is shown" in page
    assert 'id="real-users-table"' not in page
