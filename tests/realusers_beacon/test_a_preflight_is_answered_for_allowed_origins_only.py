"""A CORS preflight (OPTIONS, no body, so no key) from an origin some enabled source allows is answered 204 with
the origin echoed, POST and the content-type header allowed and a max age; from any other origin, or one only a
disabled source allows, 403 with no CORS header at all."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import IngestSourceFactory
from tests.realusers_beacon.conftest import APP

pytestmark = pytest.mark.django_db

PREFLIGHT = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}


def preflight(client, origin: str):
    return client.options(reverse("rum-beacon"), headers={"Origin": origin, **PREFLIGHT})


def test_an_allowed_origin_gets_its_preflight_answered(client, app_source):
    response = preflight(client, APP)

    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == APP
    assert "Origin" in response["Vary"]
    assert response["Access-Control-Allow-Methods"] == "POST"
    assert response["Access-Control-Allow-Headers"].lower() == "content-type"
    assert int(response["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in response


def test_an_origin_written_differently_is_the_same_origin(client):
    IngestSourceFactory(allowed_origins=["https://app.example.com"])

    assert preflight(client, "https://APP.example.com:443").status_code == 204


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "http://app.example.com", "https://app.example.com:8443", "null"]
)
def test_a_foreign_origin_gets_no_cors_headers(client, app_source, origin):
    response = preflight(client, origin)

    assert response.status_code == 403
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


def test_an_origin_of_a_disabled_source_only_is_foreign(client):
    IngestSourceFactory(allowed_origins=[APP], enabled=False)

    response = preflight(client, APP)

    assert response.status_code == 403
    assert "Access-Control-Allow-Origin" not in response
