"""With the status cache on, a page changed or deleted over the API shows so on its very next request once the
change commits, as when the admin saves it: its cached copies (its lookup, reading and rendered page) are
forgotten, under its old slug and its new one. A change made behind the API's back is served from the cache
until the period ends: that is what proves the API forgot it."""

from __future__ import annotations

import uuid

import pytest

from probes.models import StatusPage
from probes.statuspages import cache as status_cache
from tests.api.conftest import bearer
from tests.factories import StatusPageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(db, settings):
    settings.LATENCY_STATUS_CACHE_S = 30
    # A slug of its own: nothing another test cached is found under it.
    page = StatusPageFactory(slug=f"api-{uuid.uuid4().hex[:12]}", title="Acme before", public=True)
    yield page
    status_cache.forget(page.slug)


def patch(client, role, page, body: dict, capture):
    # The API forgets the cached page once its change commits (this test's transaction never does).
    with capture(execute=True):
        response = client.patch(
            f"/api/v1/status-pages/{page.id}/", body, content_type="application/json", **bearer(role.token)
        )
    assert response.status_code == 200, response.content
    return response


def test_a_new_title_shows_on_the_next_request(page, client, roles, django_capture_on_commit_callbacks):
    url = f"/status/{page.slug}/"
    assert "Acme before" in client.get(url).content.decode()
    StatusPage.objects.filter(pk=page.pk).update(title="Changed behind the cache")
    assert "Acme before" in client.get(url).content.decode()  # cached: the update above is not seen yet

    patch(client, roles.editor, page, {"title": "Acme after"}, django_capture_on_commit_callbacks)

    html = client.get(url).content.decode()
    assert "Acme after" in html and "Acme before" not in html


def test_a_page_made_private_is_404_at_once(page, client, roles, django_capture_on_commit_callbacks):
    url = f"/status/{page.slug}/"
    assert client.get(url).status_code == 200

    patch(client, roles.editor, page, {"public": False}, django_capture_on_commit_callbacks)

    assert client.get(url).status_code == 404


def test_a_renamed_page_is_gone_from_its_old_address(page, client, roles, django_capture_on_commit_callbacks):
    old = f"/status/{page.slug}/"
    assert client.get(old).status_code == 200
    new_slug = f"{page.slug}-new"

    patch(client, roles.editor, page, {"slug": new_slug}, django_capture_on_commit_callbacks)

    try:
        assert client.get(old).status_code == 404
        assert "Acme before" in client.get(f"/status/{new_slug}/").content.decode()
    finally:
        status_cache.forget(new_slug)


def test_a_deleted_page_is_404_at_once(page, client, roles, django_capture_on_commit_callbacks):
    url = f"/status/{page.slug}/"
    assert client.get(url).status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(f"/api/v1/status-pages/{page.id}/", **bearer(roles.editor.token))

    assert response.status_code == 204
    assert client.get(url).status_code == 404
