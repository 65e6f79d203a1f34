"""/where/?real_users=7d: the traffic mix is taken from real users' places (each city's calls at the region
nearest it), shown in the share inputs to adjust, and every target ranked for it; cities under the minimum
count nowhere, and a mix with none is refused with a reason."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from probes.models import Region
from tests.factories import IngestSourceFactory, spread_measurements
from tests.realusers_pages.support import IBADAN, LAGOS, LONDON, calls

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(make_region, make_target, make_probe):
    lagos = make_region(slug="rx-lagos", name="Lagos", city="Lagos", latitude=6.52, longitude=3.38)
    london = make_region(slug="rx-london", name="London", city="London", latitude=51.5, longitude=-0.13)
    # Only these two regions take users (the migration's seeded regions include a Lagos and a London).
    Region.objects.exclude(id__in=[lagos.id, london.id]).update(active=False)
    split = make_target(name="Split", latitude=6.45, longitude=3.4)
    now = timezone.now()
    probe = make_probe(target=split, regions=[lagos, london])
    spread_measurements(probe, lagos, now - timedelta(minutes=40), now, 6, seed=1, ttft_ms=100.0)
    spread_measurements(probe, london, now - timedelta(minutes=40), now, 6, seed=2, ttft_ms=2000.0)
    return {"lagos": lagos, "london": london, "now": now}


def share_value(page: str, slug: str) -> str:
    return re.search(rf'name="share-{slug}" value="([^"]*)"', page).group(1)


def test_the_mix_comes_from_real_users_places_by_nearest_region(client, viewer, world):
    source = IngestSourceFactory()
    now = world["now"]
    calls(source.id, 5, now - timedelta(days=2), LAGOS)
    calls(source.id, 10, now - timedelta(days=2), IBADAN)  # nearest region: Lagos too
    calls(source.id, 5, now - timedelta(days=1), LONDON)
    calls(source.id, 4, now - timedelta(days=1), LONDON, host="x")

    page = client.get("/where/", {"real_users": "7d", "window": "1h"}).content.decode()

    # Lagos 15 calls, London 5 (London's 4 calls to another host are a row of their own, under the minimum:
    # counted with its city's, which reaches it).
    assert share_value(page, "rx-lagos") == "62.5"
    assert share_value(page, "rx-london") == "37.5"
    assert "The shares above come from your real users: 24 calls in the last 7 days" in page
    assert 'id="mix-ranking"' in page


def test_places_under_the_minimum_make_no_mix_and_the_page_says_so(client, viewer, world):
    calls(IngestSourceFactory().id, 4, world["now"] - timedelta(hours=3), LAGOS)
    response = client.get("/where/", {"real_users": "24h"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "no place of real users reached the minimum of 5 calls in the last 24h" in page
    assert 'id="mix-ranking"' not in page


def test_real_users_and_typed_shares_together_are_refused(client, viewer, world):
    calls(IngestSourceFactory().id, 5, world["now"] - timedelta(hours=3), LAGOS)
    response = client.get("/where/", {"real_users": "24h", "share-rx-london": "3"})
    assert response.status_code == 400
    assert "give it or shares, not both" in response.content.decode()
