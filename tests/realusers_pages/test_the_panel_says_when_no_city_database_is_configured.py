"""The region and target pages' "Real users" panel says when no city database is configured, since real users are
then placed only by what they send; with one configured it says nothing about it."""

from __future__ import annotations

import pytest

from tests.factories import RegionFactory

pytestmark = pytest.mark.django_db

NOTE = 'id="real-users-no-city-database"'


def test_the_panel_names_the_missing_setting(client, viewer, settings):
    region = RegionFactory()
    settings.LATENCY_GEOIP_DATABASE = ""
    page = client.get(f"/regions/{region.slug}/").content.decode()
    assert NOTE in page
    assert "No city database is configured (LATENCY_GEOIP_DATABASE)" in page


def test_with_a_database_the_panel_says_nothing_of_it(client, viewer, settings):
    region = RegionFactory()
    assert settings.LATENCY_GEOIP_DATABASE
    assert NOTE not in client.get(f"/regions/{region.slug}/").content.decode()
