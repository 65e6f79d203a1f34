"""Where a user is: the application's own geo attributes win, then its cloud region, then the client's address
in the offline city database, then the source's default; coordinates are cut to city resolution and private
addresses place nobody."""

from __future__ import annotations

import pytest

from probes.realusers.location import CLOUD_REGIONS, place_for, place_of_address
from probes.realusers.types import NOWHERE
from tests.factories import IngestSourceFactory

LAGOS_ADDRESS = "41.58.0.1"  # GeoLite2 City: Lagos, NG


def test_geo_attributes_win_and_a_gps_fix_is_cut_to_city_resolution():
    attributes = {
        "geo.country.iso_code": "ke",
        "geo.locality.name": "Nairobi",
        "geo.location.lat": -1.292066,
        "geo.location.lon": 36.821945,
        "cloud.provider": "aws",
        "cloud.region": "eu-west-1",
    }
    place = place_for(attributes, LAGOS_ADDRESS)
    assert (place.country, place.city, place.latitude, place.longitude, place.source) == (
        "KE", "Nairobi", -1.3, 36.8, "attributes",
    )  # fmt: skip


def test_a_cloud_region_places_the_application_at_the_regions_city():
    place = place_for({"cloud.provider": "gcp", "cloud.region": "europe-west3"}, LAGOS_ADDRESS)
    assert (place.city, place.country, place.source) == ("Frankfurt", "DE", "cloud")
    # Every entry of the table is a real place.
    assert all(len(c) == 2 and -90 <= lat <= 90 and -180 <= lon <= 180 for c, _, lat, lon in CLOUD_REGIONS.values())


def test_an_unknown_cloud_region_falls_through_to_the_address():
    place = place_for({"cloud.provider": "aws", "cloud.region": "mars-north-1"}, LAGOS_ADDRESS)
    assert (place.country, place.city, place.source) == ("NG", "Lagos", "address")
    assert (place.latitude, place.longitude) == (6.5, 3.4)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "192.168.0.9", "::1", "not-an-address", "", None])
def test_private_or_malformed_addresses_place_nobody(address):
    assert place_of_address(address) is None
    assert place_for({}, address) == NOWHERE


def test_bad_attribute_values_are_ignored_not_trusted():
    attributes = {"geo.country.iso_code": "Nigeria", "geo.location.lat": 123.0, "geo.location.lon": "x"}
    assert place_for(attributes, None) == NOWHERE


@pytest.mark.django_db
def test_the_sources_default_places_users_nothing_else_places():
    source = IngestSourceFactory(default_country="GB", default_city="London", default_latitude=51.507,
                                 default_longitude=-0.128)  # fmt: skip
    place = place_for({}, "127.0.0.1", source)
    assert (place.country, place.city, place.latitude, place.longitude, place.source) == (
        "GB", "London", 51.5, -0.1, "default",
    )  # fmt: skip
    assert place_for({}, LAGOS_ADDRESS, source).city == "Lagos"
