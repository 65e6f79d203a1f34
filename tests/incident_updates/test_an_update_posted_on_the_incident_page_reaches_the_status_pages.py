"""People with the permission to add incident updates post one from the incident page: it is stored with who posted
it, listed on the incident page, and shown on the status pages of the incident's target. Without the permission
the post is refused (403) and without signing in it goes to the login page; an empty text or an unknown status is
a 400 naming the field, and nothing is stored."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from probes.models import IncidentUpdate
from tests.factories import IncidentFactory, StatusPageFactory


@pytest.fixture
def incident(db, settings):
    settings.LATENCY_STATUS_CACHE_S = 0  # the status page shows the update at once
    incident = IncidentFactory()
    StatusPageFactory(slug="public-status", targets=[incident.target])
    return incident


def _user(django_user_model, *, may_post: bool):
    user = django_user_model.objects.create_user(username="oncall", password="x-long-password-271")
    if may_post:
        user.user_permissions.add(Permission.objects.get(codename="add_incidentupdate"))
    return user


def test_a_posted_update_is_stored_listed_and_published(incident, client, django_user_model):
    user = _user(django_user_model, may_post=True)
    client.force_login(user)
    page = client.get(f"/incidents/{incident.id}/").content.decode()
    assert 'id="incident-update-form"' in page

    response = client.post(
        f"/incidents/{incident.id}/updates", {"status": "identified", "text": "  A provider region is slow.  "}
    )
    assert response.status_code == 302
    update = IncidentUpdate.objects.get(incident=incident)
    assert (update.status, update.text, update.posted_by) == ("identified", "A provider region is slow.", user)
    assert "A provider region is slow." in client.get(f"/incidents/{incident.id}/").content.decode()
    client.logout()
    assert "A provider region is slow." in client.get("/status/public-status/").content.decode()


def test_without_the_permission_the_post_is_refused_and_the_form_not_shown(incident, client, django_user_model):
    client.force_login(_user(django_user_model, may_post=False))
    assert 'id="incident-update-form"' not in client.get(f"/incidents/{incident.id}/").content.decode()
    response = client.post(f"/incidents/{incident.id}/updates", {"status": "identified", "text": "x"})
    assert response.status_code == 403
    assert not IncidentUpdate.objects.exists()


def test_signed_out_the_post_goes_to_the_login_page(incident, client):
    response = client.post(f"/incidents/{incident.id}/updates", {"status": "identified", "text": "x"})
    assert response.status_code == 302 and "/login" in response["Location"]
    assert not IncidentUpdate.objects.exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [({"status": "identified", "text": "   "}, "text"), ({"status": "fixed", "text": "ok"}, "status")],
)
def test_a_bad_update_is_a_400_naming_its_field(incident, client, django_user_model, data, field):
    client.force_login(_user(django_user_model, may_post=True))
    response = client.post(f"/incidents/{incident.id}/updates", data)
    assert response.status_code == 400
    assert field in response.context["update_form"].errors
    assert not IncidentUpdate.objects.exists()
