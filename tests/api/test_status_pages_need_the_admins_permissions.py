"""/api/v1/status-pages/ asks the admin's questions: no credentials is a 401; reading needs probes.view_statuspage,
creating, changing and deleting probes.add_, change_ and delete_statuspage (403 otherwise, nothing changed)."""

from __future__ import annotations

import pytest

from probes.models import StatusPage
from tests.api.conftest import bearer, grant
from tests.factories import StatusPageFactory

pytestmark = pytest.mark.django_db
LIST = "/api/v1/status-pages/"
NEW = {"slug": "new-page", "title": "New page"}


def test_without_credentials_nothing_is_read_or_written(client):
    page = StatusPageFactory()

    assert client.get(LIST).status_code == 401
    assert client.get(f"{LIST}{page.id}/").status_code == 401
    assert client.post(LIST, NEW, content_type="application/json").status_code == 401
    assert client.patch(f"{LIST}{page.id}/", {"title": "x"}, content_type="application/json").status_code == 401
    assert client.delete(f"{LIST}{page.id}/").status_code == 401
    assert list(StatusPage.objects.values_list("title", flat=True)) == [page.title]


def test_a_token_without_the_permission_is_refused(client, roles):
    page = StatusPageFactory()
    auth = bearer(roles.nobody.token)

    assert client.get(LIST, **auth).status_code == 403
    assert client.get(f"{LIST}{page.id}/", **auth).status_code == 403
    assert client.post(LIST, NEW, content_type="application/json", **auth).status_code == 403
    assert client.delete(f"{LIST}{page.id}/", **auth).status_code == 403
    assert list(StatusPage.objects.values_list("slug", flat=True)) == [page.slug]


def test_a_viewer_reads_but_may_not_create_change_or_delete(client, roles):
    page = StatusPageFactory(title="Kept")
    auth = bearer(roles.viewer.token)

    assert client.get(f"{LIST}{page.id}/", **auth).json()["title"] == "Kept"
    assert client.post(LIST, NEW, content_type="application/json", **auth).status_code == 403
    changed = client.patch(f"{LIST}{page.id}/", {"title": "Renamed"}, content_type="application/json", **auth)
    assert changed.status_code == 403
    assert client.delete(f"{LIST}{page.id}/", **auth).status_code == 403
    assert list(StatusPage.objects.values_list("title", flat=True)) == ["Kept"]


def test_the_permission_of_other_configuration_does_not_reach_status_pages(client, roles):
    grant(roles.nobody.user, "view_region", "add_region", "view_modelgroup", "add_modelgroup")
    auth = bearer(roles.nobody.token)

    assert client.get(LIST, **auth).status_code == 403
    assert client.post(LIST, NEW, content_type="application/json", **auth).status_code == 403

    grant(roles.nobody.user, "view_statuspage", "add_statuspage")
    assert client.post(LIST, NEW, content_type="application/json", **auth).status_code == 201
    assert StatusPage.objects.filter(slug="new-page").exists()
