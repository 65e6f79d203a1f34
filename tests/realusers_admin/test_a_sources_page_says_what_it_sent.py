"""A source's admin page answers "why is nothing on the map?": how many calls it stored, how many spans were
not LLM calls, how many items were refused and why the latest one was, and when it was last seen."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from probes.models import IngestSource
from tests.factories import IngestSourceFactory
from tests.realusers_otlp.conftest import trace_request

pytestmark = pytest.mark.django_db

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "server.address": "api.openai.com"}


def _export(client, source, spans):
    return client.post(
        reverse("otlp-traces"),
        trace_request(spans).SerializeToString(),
        content_type="application/x-protobuf",
        HTTP_AUTHORIZATION=f"Bearer {source.token}",
    )


def test_the_counters_add_up_across_exports_and_show_on_the_page_and_the_list(client, admin_client):
    source = IngestSourceFactory(name="shop")
    t = time.time_ns() - 5_000_000_000
    first = [
        {"start": t, "end": t + 900_000_000, "attributes": CHAT},
        {"start": t, "end": t + 10_000_000, "attributes": {"http.request.method": "GET"}},
        {"start": t, "end": t - 1, "attributes": CHAT},  # ends before it starts: refused
    ]
    assert _export(client, source, first).status_code == 200
    second = [{"start": t, "end": t + 800_000_000, "attributes": CHAT}] * 2
    assert _export(client, source, second).status_code == 200

    source.refresh_from_db()
    assert (source.calls_stored, source.spans_ignored, source.rejected) == (3, 1, 1)
    assert "end no earlier than its start" in source.last_rejection
    assert source.last_seen_at is not None

    page = admin_client.get(reverse("admin:probes_ingestsource_change", args=[source.id])).content.decode()
    assert "What it sent" in page and "end no earlier than its start" in page
    listing = admin_client.get(reverse("admin:probes_ingestsource_changelist")).content.decode()
    assert '<td class="field-calls_stored">3</td>' in listing


def test_a_refused_token_counts_nothing(client):
    source = IngestSourceFactory()
    other = IngestSourceFactory()
    t = time.time_ns() - 5_000_000_000
    other.token = source.token + "x"
    assert _export(client, other, [{"start": t, "end": t + 1, "attributes": CHAT}]).status_code == 401
    assert list(IngestSource.objects.values_list("calls_stored", "rejected", "last_seen_at")) == [(0, 0, None)] * 2
