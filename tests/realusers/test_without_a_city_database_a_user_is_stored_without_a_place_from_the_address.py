"""With no city database configured (LATENCY_GEOIP_DATABASE empty, as a fresh production install is), the address
places nobody: a call is placed by what it says or by its source's default, else stored without a place, never
refused; and a database configured later is used from the next call on."""

from __future__ import annotations

import pytest

from probes.realusers.location import city_database_configured, place_for, place_of_address
from probes.realusers.types import NOWHERE
from tests.factories import IngestSourceFactory

LAGOS_ADDRESS = "41.58.0.1"  # the demo database's Lagos, NG


def test_the_address_places_nobody_and_the_call_has_no_place(settings):
    settings.LATENCY_GEOIP_DATABASE = ""
    assert not city_database_configured()
    assert place_of_address(LAGOS_ADDRESS) is None
    assert place_for({}, LAGOS_ADDRESS) == NOWHERE


@pytest.mark.django_db
def test_the_sources_default_place_still_applies(settings):
    settings.LATENCY_GEOIP_DATABASE = ""
    source = IngestSourceFactory(
        default_country="ng", default_city="Lagos", default_latitude=6.45, default_longitude=3.4
    )
    place = place_for({}, LAGOS_ADDRESS, source)
    assert (place.country, place.city, place.source) == ("NG", "Lagos", "default")


def test_a_database_named_later_places_the_next_call(settings):
    named = settings.LATENCY_GEOIP_DATABASE
    assert named, "the tests place users with the demo database (tests/conftest.py)"
    settings.LATENCY_GEOIP_DATABASE = ""
    assert place_of_address(LAGOS_ADDRESS) is None
    settings.LATENCY_GEOIP_DATABASE = named
    place = place_of_address(LAGOS_ADDRESS)
    assert place is not None and (place.country, place.city) == ("NG", "Lagos")
