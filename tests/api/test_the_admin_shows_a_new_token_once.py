"""A token made in the admin is shown once, in the answer to the POST that made it; the list, its page and the
history never show it again, and only a superuser may make one for somebody else."""

from __future__ import annotations

import re

import pytest

from probes.apitokens.models import ApiToken
from tests.api.conftest import bearer, grant

pytestmark = pytest.mark.django_db

ADD = "/admin/probes/apitoken/add/"


def test_the_token_is_shown_once_then_works(client, admin_user):
    client.force_login(admin_user)
    made = client.post(ADD, {"user": admin_user.pk, "name": "grafana"})
    assert made.status_code == 200
    assert made["Cache-Control"].startswith("max-age=0") or "no-cache" in made["Cache-Control"]
    token = re.search(r'<pre id="api-token" class="credential">(lapi_[^<]+)</pre>', made.content.decode()).group(1)
    row = ApiToken.objects.get()
    for page in (
        "/admin/probes/apitoken/",
        f"/admin/probes/apitoken/{row.pk}/change/",
        f"/admin/probes/apitoken/{row.pk}/history/",
    ):
        assert token not in client.get(page).content.decode()
    client.logout()
    assert client.get("/api/v1/regions/", **bearer(token)).status_code == 200


def test_a_staff_user_makes_tokens_only_for_themselves(client, django_user_model, admin_user):
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    grant(staff, "add_apitoken", "view_apitoken", "change_apitoken")
    client.force_login(staff)
    refused = client.post(ADD, {"user": admin_user.pk, "name": "escalate"})
    assert refused.status_code == 200 and "user" in refused.context["adminform"].form.errors
    assert not ApiToken.objects.filter(user=admin_user).exists()
    client.post(ADD, {"user": staff.pk, "name": "mine"})
    assert ApiToken.objects.get().user == staff


def test_revoking_in_the_admin_stops_the_token(client, admin_user):
    from probes.apitokens.tokens import issue

    _row, token = issue(admin_user, "old")
    client.force_login(admin_user)
    client.post(
        "/admin/probes/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [ApiToken.objects.get().pk]},
    )
    assert ApiToken.objects.get().revoked_at is not None
    client.logout()
    assert client.get("/api/v1/regions/", **bearer(token)).status_code == 401
