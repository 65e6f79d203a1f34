"""A time or duration the site cannot hold is a 400 naming its parameter, never a 500, through every door that
takes one: the dashboard's pages and JSON API, the CSV exports, /api/v1/'s lists and aggregates (and its
cursor), the silence form. A duration longer than timedelta holds (99999999999d), one whose start falls before
year 1 (3000000d), an ISO time whose UTC value lies outside datetime's range (0001-01-01T00:00:00+14:00), or
next to its ends (year 1, year 9999) where the windows computed around it would overflow."""

from __future__ import annotations

import base64
import json

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from probes.models import Silence
from tests.factories import ProbeFactory, RegionFactory

pytestmark = pytest.mark.django_db

BAD_TIMES = [
    "99999999999d",
    "3000000d",
    "1" + "0" * 5000 + "s",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "1969-12-31T23:59:59Z",
]

# Every GET that reads since and until: the dashboard's pages and JSON API, the exports, /api/v1/.
ENDPOINTS = [
    "/",
    "/regions/out-of-range/",
    "/where/",
    "/api/overview",
    "/api/histograms",
    "/api/timeseries",
    "/api/phases",
    "/api/table",
    "/api/real-users",
    "/export/measurements.csv",
    "/export/regions.csv",
    "/export/real-users.csv",
    "/api/v1/measurements/",
    "/api/v1/aggregates/summary/",
    "/api/v1/aggregates/table/",
    "/api/v1/aggregates/phases/",
    "/api/v1/aggregates/series/",
    "/api/v1/aggregates/distribution/",
]


@pytest.fixture
def reader(client, django_user_model):
    """A signed-in user who may read everything these doors show, on the test's client."""
    user = django_user_model.objects.create_user(username="reader", password="a-long-test-password-7301")
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=("view_measurement", "view_incident", "add_silence"))
    )
    client.force_login(user)
    ProbeFactory(regions=[RegionFactory(slug="out-of-range")])
    return user


def refused(response) -> str:
    """The parameter a 400 names, in the door's own idiom: {"param": ...} (dashboard API, exports), DRF's
    {"<param>": [...]} (/api/v1/), or the page's error line."""
    assert response.status_code == 400, response.content[:300]
    if response["Content-Type"].startswith("application/json"):
        body = json.loads(response.content)
        return body["param"] if "param" in body else next(iter(body))
    html = response.content.decode()
    return next(name for name in ("since", "until") if f"<code>{name}</code>" in html)


@pytest.mark.parametrize("value", BAD_TIMES)
@pytest.mark.parametrize("url", ENDPOINTS)
def test_a_since_out_of_range_is_a_400_naming_since(client, reader, url, value):
    assert refused(client.get(url, {"since": value})) == "since"


@pytest.mark.parametrize("value", BAD_TIMES)
@pytest.mark.parametrize("url", ENDPOINTS)
def test_an_until_out_of_range_is_a_400_naming_until(client, reader, url, value):
    assert refused(client.get(url, {"since": "1h", "until": value})) == "until"


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z"])
def test_a_cursor_naming_a_time_out_of_range_is_a_400_naming_it(client, reader, when):
    cursor = base64.urlsafe_b64encode(f"{when}|1".encode()).decode().rstrip("=")
    assert refused(client.get("/api/v1/measurements/", {"cursor": cursor})) == "cursor"


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01 00:00"])
def test_a_silence_ending_out_of_range_is_a_400_naming_the_field(client, reader, value):
    target = ProbeFactory().target
    response = client.post(reverse("target-silence", args=[target.id]), {"duration": "until", "until": value})
    assert response.status_code == 400
    assert "outside the times this site reads" in response.content.decode()
    assert not Silence.objects.exists()


def test_times_inside_the_range_are_still_read(client, reader):
    # The exports stream on a connection of their own (tests/exports reads them); their parameters are read here.
    for url in (u for u in ENDPOINTS if not u.startswith("/export/")):
        response = client.get(url, {"since": "2026-01-01T00:00:00+14:00", "until": "2026-01-02T00:00:00Z"})
        assert response.status_code == 200, url
