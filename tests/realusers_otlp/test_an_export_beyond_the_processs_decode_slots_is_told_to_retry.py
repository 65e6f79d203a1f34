"""A web process reads and decodes at most LATENCY_OTLP_DECODE_SLOTS bodies at once: an export finding every slot
taken for LATENCY_OTLP_DECODE_WAIT_SECONDS is answered 503 with Retry-After (retryable in OTLP/HTTP) and stored
not at all; once a slot is free the same export is taken. The slots are held here by the test itself, in the
process that serves the request (Django's test client), so that every slot is taken for certain."""

from __future__ import annotations

import pytest
from django.urls import reverse

from latency import otlp_views
from probes.models import Observation
from tests.factories import IngestSourceFactory
from tests.realusers_otlp.conftest import PROTOBUF, genai_spans

pytestmark = pytest.mark.django_db


def test_every_slot_taken_is_503_and_a_free_one_is_200(client, settings):
    settings.LATENCY_OTLP_DECODE_SLOTS = 2
    settings.LATENCY_OTLP_DECODE_WAIT_SECONDS = 0
    source = IngestSourceFactory()
    body = genai_spans(3).SerializeToString()

    def export():
        return client.post(
            reverse("otlp-traces"),
            data=body,
            content_type=PROTOBUF,
            headers={"Authorization": f"Bearer {source.token}"},
        )

    slots = otlp_views._decode_slots()
    assert slots.acquire(timeout=5) and slots.acquire(timeout=5)
    try:
        busy = export()
    finally:
        slots.release()
    assert busy.status_code == 503
    assert int(busy["Retry-After"]) >= 1
    assert Observation.objects.count() == 0

    try:
        assert export().status_code == 200
    finally:
        slots.release()
    assert Observation.objects.count() == 3
