"""A metric with nothing to draw in the selection is said in words, by every
chart endpoint alike (no_data) and by the page in place of the charts: with
its reason when the targets' configuration makes it certain (no TLS over
plain HTTP), else that the window holds no such values."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import MeasurementFactory

pytestmark = pytest.mark.django_db

CHARTS = ("/api/overview", "/api/histograms", "/api/timeseries", "/api/table")
PLAIN = "No TLS: these targets use plain HTTP, so there is no TLS handshake to measure."


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-52"))
    return client


@pytest.fixture
def plain_targets(make_region, make_target, make_probe):
    """Two plain-HTTP targets measured in the last hour: no TLS phase at all."""
    region = make_region(slug="nd-lima", latitude=-12.0, longitude=-77.0)
    targets = []
    now = timezone.now()
    for name in ("Plain one", "Plain two"):
        target = make_target(name=name, url="http://127.0.0.1:9/v1/chat/completions")
        probe = make_probe(target=target, regions=[region])
        for i in range(3):
            when = now - timedelta(minutes=5 + i)
            MeasurementFactory(probe=probe, region=region, scheduled_for=when, tls_ms=None)
        targets.append(target)
    return targets


def answers(client, **params) -> dict[str, dict]:
    out = {}
    for url in CHARTS:
        response = client.get(url, params)
        assert response.status_code == 200, url
        out[url] = json.loads(response.content)
    return out


def test_tls_over_plain_http_targets_is_explained_by_every_chart(signed_in, plain_targets):
    for url, body in answers(signed_in, metric="tls").items():
        assert body["no_data"] == PLAIN, url
    one = plain_targets[0].id
    for url, body in answers(signed_in, metric="tls", target=one).items():
        assert body["no_data"] == "No TLS: this target uses plain HTTP, so there is no TLS handshake to measure.", url


def test_a_metric_without_values_in_the_window_says_so_when_no_reason_is_certain(
    signed_in, plain_targets, make_target, make_probe
):
    # An https target, but its connections were all reused: TLS could have been measured and was not.
    secure = make_target(name="Secure", url="https://api.example.test/v1/chat/completions")
    probe = make_probe(target=secure, regions=[plain_targets[0].probes.first().regions.first()])
    MeasurementFactory(probe=probe, region=probe.regions.first(), tls_ms=None, connection="warm")
    for url, body in answers(signed_in, metric="tls").items():
        assert body["no_data"] == "No TLS handshake measurements in the last 1 h.", url


def test_a_metric_with_values_has_no_message(signed_in, plain_targets):
    for url, body in answers(signed_in, metric="ttft").items():
        assert body["no_data"] == "", url


def test_the_page_shows_the_reason_in_place_of_the_charts_and_their_legend(signed_in, plain_targets):
    html = signed_in.get("/", {"metric": "tls"}).content.decode()
    for chart in ("map", "histograms", "timeseries"):
        note = re.search(rf'<p class="no-data card-message" data-no-data="{chart}"([^>]*)>([^<]*)</p>', html)
        assert note and "hidden" not in note.group(1) and note.group(2) == PLAIN, chart
        assert re.search(rf'<div id="{chart}"[^>]* hidden', html), chart
    assert re.search(r'<ul class="map-legend"[^>]* hidden', html)

    html = signed_in.get("/", {"metric": "ttft"}).content.decode()
    assert re.search(r'<p class="no-data card-message" data-no-data="map" hidden>', html)
    assert not re.search(r'<div id="map"[^>]* hidden', html)
