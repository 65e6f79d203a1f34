"""The list of ingest sources shows name, enabled, origins, last seen, created and rotated; never the token, nor
its hash, nor a part of either."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from probes.models import IngestSource
from tests.factories import IngestSourceFactory

pytestmark = pytest.mark.django_db


def test_the_list_names_sources_and_hides_their_tokens(admin_client):
    source = IngestSourceFactory(name="Shop assistant", allowed_origins=["https://shop.example.com"])
    IngestSource.objects.filter(pk=source.pk).update(last_seen_at=datetime(2026, 11, 30, 9, 15, tzinfo=UTC))

    page = admin_client.get(reverse("admin:probes_ingestsource_changelist")).content.decode()

    assert "Shop assistant" in page and "https://shop.example.com" in page
    for column in ("enabled", "allowed origins", "last seen at", "created at", "rotated at"):
        assert f">{column.capitalize()}<" in page or column in page.lower()
    secrets = (source.token, source.token_hash)
    assert not [s for s in secrets if any(s[i : i + 8] in page for i in range(4, len(s) - 8))]
