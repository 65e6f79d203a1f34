"""The browser key is public, so the Origin header is what ties a beacon to the source's pages: a beacon from an
origin the source does not allow (another site, another scheme or port, an origin only another source allows),
or with no Origin at all, is refused 403 without any CORS header, and nothing is stored."""

from __future__ import annotations

import pytest

from probes.models import Observation
from tests.factories import IngestSourceFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("origin", ["https://evil.example", "http://app.example.com", "https://app.example.com:444"])
def test_a_foreign_origin_is_refused(app_source, send_beacon, origin):
    response = send_beacon(app_source.browser_key, origin)

    assert response.status_code == 403
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]
    assert not Observation.objects.exists()


def test_an_origin_another_source_allows_is_foreign_to_this_key(app_source, send_beacon):
    IngestSourceFactory(allowed_origins=["https://other.example.com"])

    response = send_beacon(app_source.browser_key, "https://other.example.com")

    assert response.status_code == 403
    assert "Access-Control-Allow-Origin" not in response
    assert not Observation.objects.exists()


def test_a_beacon_without_an_origin_is_refused(app_source, send_beacon):
    assert send_beacon(app_source.browser_key, None).status_code == 403
    assert not Observation.objects.exists()
