"""/api/v1/ acts with its user's admin permissions and has no door to users, groups or permissions: a token of a
staff user who may change users and groups (or of a superuser) finds no such resource, in the schema or at a
guessed path, so the admin's guard on rights (probes.admin_users) has no way around it here."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from probes.apitokens.tokens import issue
from tests.api.conftest import bearer

pytestmark = pytest.mark.django_db

GUESSES = ["users", "user", "groups", "group", "permissions", "auth/user", "tokens", "apitokens"]


@pytest.fixture
def tokens(django_user_model):
    deputy = django_user_model.objects.create_user("deputy", "deputy@example.org", is_staff=True)
    deputy.user_permissions.add(*Permission.objects.filter(content_type__app_label="auth"))
    boss = django_user_model.objects.create_superuser("boss", "boss@example.org")
    return [issue(deputy, "deputy's script")[1], issue(boss, "boss's script")[1]]


def test_the_schema_names_no_user_group_or_permission(client, tokens):
    schema = client.get("/api/v1/schema/?format=json", **bearer(tokens[0])).json()
    # Model groups (one model served by several targets) are no user groups: their resource is set aside.
    paths = " ".join(path.replace("/model-groups/", "/") for path in schema["paths"]).lower()
    assert "/api/v1/model-groups/" in schema["paths"]
    assert not any(word in paths for word in ("user", "group", "permission", "token"))


@pytest.mark.parametrize("guess", GUESSES)
def test_no_path_changes_rights(client, django_user_model, tokens, guess):
    for token in tokens:
        for method in ("post", "put", "patch"):
            body = {"username": "deputy", "is_superuser": True, "is_staff": True}
            response = getattr(client, method)(
                f"/api/v1/{guess}/1/" if method != "post" else f"/api/v1/{guess}/",
                body,
                content_type="application/json",
                **bearer(token),
            )
            assert response.status_code == 404, (guess, method)
    assert not django_user_model.objects.get(username="deputy").is_superuser
