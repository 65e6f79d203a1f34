"""A body over LATENCY_BEACON_MAX_BODY_BYTES is refused 413 before it is parsed, whether its length is declared
or only found by reading (a chunked request over real HTTP); a body just under the cap is read as usual."""

from __future__ import annotations

from urllib.parse import urlencode

import httpx
import pytest
from django.urls import reverse

from probes.models import Observation
from tests.realusers_beacon.conftest import APP, timings

pytestmark = pytest.mark.django_db


def test_a_body_over_the_cap_is_refused(app_source, send_beacon, settings):
    body = urlencode(
        {"key": app_source.browser_key, **timings(), "label": "x" * settings.LATENCY_BEACON_MAX_BODY_BYTES}
    )

    response = send_beacon(app_source.browser_key, body=body)

    assert response.status_code == 413
    # An allowed origin may read why.
    assert response["Access-Control-Allow-Origin"] == APP
    assert not Observation.objects.exists()


def test_a_chunked_body_with_no_length_is_cut_at_the_cap(app_source, asgi_server, settings):
    # Over real HTTP: no Content-Length to go by, so the view reads no more than the cap and one byte.
    def chunks():
        yield urlencode({"key": app_source.browser_key, **timings()}).encode()
        for _ in range(64):
            yield b"&pad=" + b"y" * 1024

    response = httpx.post(
        asgi_server.origin + reverse("rum-beacon"), content=chunks(),
        headers={"Origin": APP, "Content-Type": "application/x-www-form-urlencoded"}, timeout=30,
    )  # fmt: skip

    assert "content-length" not in {k.lower() for k in response.request.headers}
    assert response.status_code == 413
    assert not Observation.objects.exists()


def test_a_body_under_the_cap_is_taken(app_source, send_beacon, settings):
    body = urlencode({"key": app_source.browser_key, **timings(), "label": "chat"})
    body += "&pad=" + "z" * (settings.LATENCY_BEACON_MAX_BODY_BYTES - len(body) - 5)
    assert len(body) <= settings.LATENCY_BEACON_MAX_BODY_BYTES

    assert send_beacon(app_source.browser_key, body=body).status_code == 204
