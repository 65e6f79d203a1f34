"""The beacon's tests: a source whose pages may send beacons, and a poster that sends one as a browser would
(a URL-encoded body, an Origin header). The browser test uses tests/browser's Chromium and uvicorn fixtures."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.urls import reverse

from probes.realusers import matching
from tests.browser.conftest import asgi_server, browser_page  # noqa: F401 (fixtures)

APP = "https://app.example.com"


@pytest.fixture(autouse=True)
def _fresh_targets():
    matching.forget()
    yield
    matching.forget()


@pytest.fixture
def app_source(db):
    from tests.factories import IngestSourceFactory

    return IngestSourceFactory(allowed_origins=[APP])


def timings(**overrides) -> dict:
    """A call clicked 1000 ms after the page loaded, its first token 850 ms later, done 2500 ms after the click."""
    return {"start": "1000.0", "first_token": "1850.0", "end": "3500.0", **overrides}


@pytest.fixture
def send_beacon(client):
    def send(
        key: str,
        origin: str | None = APP,
        *,
        content_type="application/x-www-form-urlencoded",
        body=None,
        headers=None,
        **fields,
    ):
        data = body if body is not None else urlencode({"key": key, **timings(**fields)})
        extra = dict(headers or {})
        if origin is not None:
            extra["Origin"] = origin
        return client.post(reverse("rum-beacon"), data=data, content_type=content_type, headers=extra)

    return send
