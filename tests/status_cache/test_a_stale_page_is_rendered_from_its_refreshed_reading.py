"""A process refreshes one stale entry at a time, but what a refresh reads itself is part of it: a stale page
whose reading is stale too is rendered from the reading read again, not from the stale one."""

from __future__ import annotations

import uuid

import pytest

from probes.models import StatusPage
from probes.statuspages import cache as status_cache
from tests.factories import StatusPageFactory, TargetFactory


@pytest.fixture
def page(db, settings):
    settings.LATENCY_STATUS_CACHE_S = 30
    page = StatusPageFactory(slug=f"nested-{uuid.uuid4().hex[:12]}", title="Before", targets=[TargetFactory()])
    yield page
    status_cache.forget(page.slug)


def test_the_refreshed_page_shows_the_refreshed_reading(page, client, monkeypatch):
    assert "Before" in client.get(f"/status/{page.slug}/").content.decode()
    # Changed behind the cache's back (not through the admin, which would forget the page).
    StatusPage.objects.filter(id=page.id).update(title="After")
    later = status_cache.time.time() + 30 * (1 + status_cache.SPREAD) + 1
    monkeypatch.setattr(status_cache.time, "time", lambda: later)
    assert "After" in client.get(f"/status/{page.slug}/").content.decode()
