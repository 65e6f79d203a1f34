"""A beacon the form refuses is answered 400 naming the field, and stores nothing: timings that are not numbers,
out of order or out of bounds, a field sent twice, a label or error that reads like text (no prompt or answer
rides in a beacon), a body that is not UTF-8; another content type is 415."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from probes.models import Observation
from tests.realusers_beacon.conftest import timings

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"start": "soon"}, "start"),
        ({"end": "NaN"}, "end"),
        ({"first_token": "Infinity"}, "first_token"),
        ({"start": "-5"}, "start"),
        ({"tokens": "2.5"}, "tokens"),
        ({"tokens": "-1"}, "tokens"),
        ({"end": "900"}, "__all__"),  # before the start
        ({"first_token": "3600"}, "__all__"),  # after the end
        ({"end": str(1000 + 31 * 60 * 1000)}, "__all__"),  # a call of 31 minutes
        ({"label": "Summarise this contract for me, please."}, "label"),
        ({"label": "x" * 65}, "label"),
        ({"label": "chat\r\nanswer"}, "label"),
        ({"error": "TypeError: Failed to fetch the answer"}, "error"),
    ],
)
def test_a_field_out_of_bounds_is_refused(app_source, send_beacon, fields, field):
    response = send_beacon(app_source.browser_key, **fields)

    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert not Observation.objects.exists()


def test_a_missing_key_or_end_is_refused(app_source, send_beacon):
    body = urlencode({"start": "1", "first_token": "2"})

    response = send_beacon(app_source.browser_key, body=body)

    assert response.status_code == 400
    assert {"key", "end"} <= set(response.json()["fields"])


def test_a_field_sent_twice_is_refused(app_source, send_beacon):
    body = urlencode({"key": app_source.browser_key, **timings()}) + "&end=9999"

    response = send_beacon(app_source.browser_key, body=body)

    assert response.status_code == 400
    assert "end" in response.json()["fields"]["__all__"][0]["message"]


def test_a_body_that_is_not_utf8_is_refused(app_source, send_beacon):
    response = send_beacon(app_source.browser_key, body=b"key=\xff\xfe&start=1", content_type="text/plain")

    assert response.status_code == 400
    assert not Observation.objects.exists()


def test_a_body_of_thousands_of_fields_is_refused(app_source, send_beacon):
    body = urlencode({"key": app_source.browser_key, **timings()}) + "&x" * 5000

    response = send_beacon(app_source.browser_key, body=body)

    assert response.status_code == 400
    assert response.json()["error"] == "malformed beacon"
    assert not Observation.objects.exists()


def test_json_is_not_a_beacon(app_source, send_beacon):
    body = json.dumps({"key": app_source.browser_key, "start": 1, "end": 2})

    response = send_beacon(app_source.browser_key, body=body, content_type="application/json")

    assert response.status_code == 415
    assert not Observation.objects.exists()


def test_text_plain_holding_the_form_is_taken(app_source, send_beacon):
    body = urlencode({"key": app_source.browser_key, **timings(), "label": "chat"})

    assert send_beacon(app_source.browser_key, body=body, content_type="text/plain;charset=UTF-8").status_code == 204
    assert Observation.objects.get().service == "chat"
