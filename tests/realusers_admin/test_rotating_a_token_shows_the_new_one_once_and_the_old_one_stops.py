""" "Rotate token" on a source's page is a POST with CSRF: its answer shows the new token once, the new token
authenticates and the old one no longer does, the rotation time is set, and the history says it was rotated
without any part of either token. A GET, a POST without the CSRF token, or a user without the permission to
change sources rotates nothing."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from probes.models import IngestSource
from probes.realusers.sources import authenticate
from tests.factories import IngestSourceFactory
from tests.realusers_admin.conftest import shown_token

pytestmark = pytest.mark.django_db


def rotate_url(source) -> str:
    return reverse("admin:probes_ingestsource_rotate", args=[source.pk])


def test_rotating_shows_a_new_token_and_the_old_one_stops_working(admin_client):
    source = IngestSourceFactory()
    old = source.token

    page = admin_client.get(reverse("admin:probes_ingestsource_change", args=[source.pk])).content.decode()
    assert f'action="{rotate_url(source)}"' in page and "csrfmiddlewaretoken" in page
    response = admin_client.post(rotate_url(source))

    assert response.status_code == 200
    new = shown_token(response)
    assert new != old
    assert authenticate(new) == source
    assert authenticate(old) is None
    assert "no-store" in response["Cache-Control"]
    source.refresh_from_db()
    assert source.rotated_at is not None
    [entry] = LogEntry.objects.filter(object_id=str(source.pk))
    assert "Rotated" in entry.get_change_message()
    assert new[4:12] not in entry.change_message and old[4:12] not in entry.change_message
    # The browser key is public and stays: the pages that embed it need no change.
    assert IngestSource.objects.get().browser_key == source.browser_key


def test_a_get_rotates_nothing(admin_client):
    source = IngestSourceFactory()

    assert admin_client.get(rotate_url(source)).status_code == 405
    assert authenticate(source.token) == source


def test_a_post_without_the_csrf_token_rotates_nothing(admin_user):
    source = IngestSourceFactory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)

    assert client.post(rotate_url(source)).status_code == 403
    assert authenticate(source.token) == source


def test_a_user_who_may_only_view_sources_rotates_nothing():
    source = IngestSourceFactory()
    user = User.objects.create_user("viewer", password="x", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_ingestsource"))
    client = Client()
    client.force_login(user)

    page = client.get(reverse("admin:probes_ingestsource_change", args=[source.pk])).content.decode()
    assert rotate_url(source) not in page
    assert client.post(rotate_url(source)).status_code == 403
    assert authenticate(source.token) == source
