"""The add form refuses, with a message saying what to write, origins that are not origins (a path, another
scheme, a bad port), a country that is no two-letter code, coordinates off the globe or half given; nothing is
made then."""

from __future__ import annotations

import pytest
from django.urls import reverse

from probes.models import IngestSource
from tests.realusers_admin.conftest import source_data

pytestmark = pytest.mark.django_db


def errors(response) -> dict:
    assert response.status_code == 200
    form = response.context["adminform"].form
    return {name: [str(e) for e in errs] for name, errs in form.errors.items()}


@pytest.mark.parametrize(
    "origin",
    ["https://shop.example.com/app", "ftp://shop.example.com", "https://shop.example.com:99999", "shop.example.com"],
)
def test_an_origin_that_is_no_origin_is_refused(admin_client, origin):
    response = admin_client.post(reverse("admin:probes_ingestsource_add"), source_data(allowed_origins=origin))

    [message] = errors(response)["allowed_origins"]
    assert origin in message and "scheme://host" in message
    assert not IngestSource.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"default_country": "Nigeria"}, "default_country"),
        ({"default_country": "N1"}, "default_country"),
        ({"default_latitude": "91", "default_longitude": "3.4"}, "default_latitude"),
        ({"default_latitude": "6.45", "default_longitude": "181"}, "default_longitude"),
        ({"default_latitude": "6.45"}, "__all__"),
    ],
)
def test_a_bad_default_place_is_refused(admin_client, fields, field):
    response = admin_client.post(reverse("admin:probes_ingestsource_add"), source_data(**fields))

    assert field in errors(response)
    assert not IngestSource.objects.exists()


def test_a_good_default_place_is_kept_with_the_country_in_capitals(admin_client):
    data = source_data(default_country="ng", default_city="Lagos", default_latitude="6.45", default_longitude="3.4")

    admin_client.post(reverse("admin:probes_ingestsource_add"), data)

    source = IngestSource.objects.get()
    assert (source.default_country, source.default_city, source.default_latitude) == ("NG", "Lagos", 6.45)
