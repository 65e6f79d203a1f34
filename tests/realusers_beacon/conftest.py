"""The beacon's tests: a source whose pages may send beacons, and a poster that sends one as a browser would
(a URL-encoded body, an Origin header). The browser test uses tests/browser's Chromium and uvicorn fixtures;
`site` is the site on a real uvicorn without static files (for floods of real HTTP requests), and
`post_beacon(site, key, from_address=...)` sends one over HTTP from a loopback address of its own."""

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
def site(transactional_db, test_redis_url, settings, tmp_path, request):
    from tests.conftest import running_site

    yield from running_site(request, settings, test_redis_url, tmp_path, channel="beacon", collect_static=False)


def post_beacon(site, key: str, *, from_address: str = "127.0.0.1", origin: str = APP, **fields) -> int:
    """One beacon over HTTP from `from_address` (any 127.x.y.z: the loopback answers them all, so each is a peer
    of its own to the server); returns the status."""
    import http.client
    from urllib.parse import urlsplit

    host, port = urlsplit(site.origin).hostname, urlsplit(site.origin).port
    conn = http.client.HTTPConnection(host, port, timeout=20, source_address=(from_address, 0))
    try:
        conn.request(
            "POST",
            reverse("rum-beacon"),
            body=urlencode({"key": key, **timings(**fields)}),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": origin},
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


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
        remote_addr: str = "127.0.0.1",
        **fields,
    ):
        data = body if body is not None else urlencode({"key": key, **timings(**fields)})
        extra = dict(headers or {})
        if origin is not None:
            extra["Origin"] = origin
        return client.post(
            reverse("rum-beacon"), data=data, content_type=content_type, headers=extra, REMOTE_ADDR=remote_addr
        )

    return send
