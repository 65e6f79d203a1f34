"""Only POSTs of OTLP's two encodings are taken: another Content-Type or Content-Encoding is 415, another
method 405."""

from __future__ import annotations

import requests

from probes.models import Observation


def test_a_wrong_content_type_is_415(site, source, post):
    response = post(site, "traces", b"resourceSpans=1", token=source.token, content_type="text/plain")
    assert response.status_code == 415
    response = post(site, "metrics", b"", token=source.token, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert Observation.objects.count() == 0


def test_an_unknown_content_encoding_is_415(site, source, post):
    response = post(site, "traces", b"\x28\xb5\x2f\xfd", token=source.token, **{"Content-Encoding": "zstd"})
    assert response.status_code == 415


def test_a_get_is_405(site, source):
    response = requests.get(f"{site.origin}/otlp/v1/traces", timeout=20)
    assert response.status_code == 405
    assert "POST" in response.headers["Allow"]
