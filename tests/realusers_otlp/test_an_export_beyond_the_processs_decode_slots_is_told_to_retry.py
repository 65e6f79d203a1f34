"""A web process reads and decodes at most LATENCY_OTLP_DECODE_SLOTS bodies at once: an export finding every slot
taken for LATENCY_OTLP_DECODE_WAIT_SECONDS is answered 503 with Retry-After (retryable in OTLP/HTTP) and stored
not at all; once a slot is free the same export is taken. A JSON export needs two slots (reading JSON holds its
text twice), so one free slot takes a protobuf export but not a JSON one. The slots are held here by the test
itself, in the process that serves the request (Django's test client), so that they are taken for certain."""

from __future__ import annotations

import pytest
from django.urls import reverse

from latency import otlp_views
from probes.models import Observation
from probes.realusers.otlp import serialize
from tests.factories import IngestSourceFactory
from tests.realusers_otlp.conftest import JSON, PROTOBUF, genai_spans

pytestmark = pytest.mark.django_db


def test_every_slot_taken_is_503_and_a_free_one_is_200(client, settings):
    settings.LATENCY_OTLP_DECODE_SLOTS = 2
    settings.LATENCY_OTLP_DECODE_WAIT_SECONDS = 0
    source = IngestSourceFactory()
    request = genai_spans(3)

    def export(content_type: str = PROTOBUF):
        body = request.SerializeToString() if content_type == PROTOBUF else serialize(request, "json")
        return client.post(
            reverse("otlp-traces"), data=body, content_type=content_type,
            headers={"Authorization": f"Bearer {source.token}"},
        )  # fmt: skip

    slots = otlp_views.decode_slots()
    assert slots.acquire(2, timeout=5)
    try:
        busy = export()
    finally:
        slots.release(1)
    assert busy.status_code == 503
    assert int(busy["Retry-After"]) >= 1
    assert Observation.objects.count() == 0

    try:
        assert export(JSON).status_code == 503
        assert export().status_code == 200
    finally:
        slots.release(1)
    assert Observation.objects.count() == 3
    assert export(JSON).status_code == 200
    assert Observation.objects.count() == 6
