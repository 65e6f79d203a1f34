"""A status page's reading is cached for LATENCY_STATUS_CACHE_S (probes.statuspages.cache): once read, its page, its
summary.json and a badge already read answer without a database statement; once the period has passed, the next
request reads it again; and a change made in the admin shows on the next request, cache or not."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from probes.statuspages import cache as status_cache
from tests.factories import ServiceLevelObjectiveFactory, StatusPageFactory, TargetFactory
from tests.slos_pages.conftest import counted


@pytest.fixture
def page(db, settings):
    settings.LATENCY_STATUS_CACHE_S = 30
    target = TargetFactory(name="chat-eu")
    objective = counted(ServiceLevelObjectiveFactory(targets=[target]))
    # A slug of its own: nothing another test cached is found under it.
    page = StatusPageFactory(slug=f"cached-{uuid.uuid4().hex[:12]}", targets=[target], slos=[objective])
    yield page
    status_cache.forget(page.slug)


def _statements(client, path: str, status: int = 200) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == status, path
    return len(queries)


def test_once_read_the_page_its_summary_and_a_badge_need_no_statement(page, client):
    target = page.targets.get()
    base = f"/status/{page.slug}/"
    assert _statements(client, base) > 0
    assert _statements(client, base) == 0
    assert _statements(client, f"{base}api/v2/summary.json") == 0
    badge = f"{base}badge/{target.id}.svg?metric=uptime&window=7d"
    assert _statements(client, badge) > 0
    assert _statements(client, badge) == 0


def test_after_the_period_one_request_reads_again(page, client, monkeypatch):
    base = f"/status/{page.slug}/"
    assert _statements(client, base) > 0
    assert _statements(client, base) == 0
    # Past the longest freshness an entry is given (the period and up to SPREAD more).
    later = status_cache.time.time() + 30 * (1 + status_cache.SPREAD) + 1
    monkeypatch.setattr(status_cache.time, "time", lambda: later)
    assert _statements(client, base) > 0  # stale: this request reads and stores it
    assert _statements(client, base) == 0


def test_a_page_made_private_in_the_admin_is_404_at_once(
    page, client, admin_client, django_capture_on_commit_callbacks
):
    base = f"/status/{page.slug}/"
    assert client.get(base).status_code == 200
    form = {
        "title": page.title,
        "slug": page.slug,
        "description": "",
        "language": "en",
        "targets": [str(t.id) for t in page.targets.all()],
        "slos": [str(o.id) for o in page.slos.all()],
        "show_latency": "on",
    }
    # The admin forgets the cached page once its change commits (this test's transaction never does).
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(f"/admin/probes/statuspage/{page.id}/change/", form)
    assert response.status_code == 302, response.content[:2000]
    assert client.get(base).status_code == 404
