"""A staff user who may change and delete users (not a superuser) cannot change a superuser's account or one
holding a right they lack (directly or through a group, active or not): not its fields, not its password, not
by deleting it, one by one or in bulk. Accounts within their own rights, theirs included, they still manage."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from tests.admin.conftest import user_form

pytestmark = pytest.mark.django_db

PASSWORD = "the-old-long-password-3390"
NEW_PASSWORD = {"usable_password": "true", "password1": "Zz9!new-long-pass", "password2": "Zz9!new-long-pass"}


@pytest.fixture
def deputy(staff):
    return staff("view_user", "change_user", "delete_user")


@pytest.fixture
def stronger(django_user_model):
    """Accounts holding more than the deputy: a superuser, a user with a permission of its own, an inactive
    user whose group holds one (activating it again would hand it back)."""
    boss = django_user_model.objects.create_superuser("boss", "boss@example.org", PASSWORD)
    editor = django_user_model.objects.create_user("editor", "editor@example.org", PASSWORD)
    editor.user_permissions.add(Permission.objects.get(codename="delete_target"))
    sleeper = django_user_model.objects.create_user("sleeper", "sleeper@example.org", PASSWORD, is_active=False)
    group = Group.objects.create(name="Operators")
    group.permissions.add(Permission.objects.get(codename="add_probe"))
    sleeper.groups.add(group)
    return [boss, editor, sleeper]


def unchanged(account) -> bool:
    before = (account.email, account.is_active, account.password)
    account.refresh_from_db()
    return (account.email, account.is_active, account.password) == before and account.check_password(PASSWORD)


def test_their_fields_cannot_be_changed(deputy, stronger):
    for account in stronger:
        url = reverse("admin:auth_user_change", args=[account.id])
        response = deputy.post(url, user_form(account, email="mine@example.org", is_active="on"))
        assert response.status_code == 403, account.username
        assert unchanged(account), account.username


def test_their_password_cannot_be_changed(deputy, stronger):
    for account in stronger:
        url = reverse("admin:auth_user_password_change", args=[account.id])
        assert deputy.client.get(url).status_code == 403
        assert deputy.post(url, NEW_PASSWORD).status_code == 403
        assert unchanged(account), account.username


def test_they_cannot_be_deleted(deputy, stronger, django_user_model):
    for account in stronger:
        response = deputy.post(reverse("admin:auth_user_delete", args=[account.id]), {"post": "yes"})
        assert response.status_code == 403, account.username
    bulk = {"action": "delete_selected", "_selected_action": [a.id for a in stronger], "post": "yes"}
    deputy.post(reverse("admin:auth_user_changelist"), bulk)
    assert django_user_model.objects.filter(id__in=[a.id for a in stronger]).count() == len(stronger)


def test_accounts_within_their_rights_are_still_managed(deputy, django_user_model):
    peer = django_user_model.objects.create_user("peer", "peer@example.org", PASSWORD)
    peer.user_permissions.add(Permission.objects.get(codename="view_user"))
    response = deputy.post(reverse("admin:auth_user_change", args=[peer.id]), user_form(peer, email="p@example.org"))
    assert response.status_code == 302
    response = deputy.post(reverse("admin:auth_user_password_change", args=[peer.id]), NEW_PASSWORD)
    assert response.status_code == 302
    peer.refresh_from_db()
    assert peer.email == "p@example.org" and peer.check_password(NEW_PASSWORD["password1"])
    # Their own password too.
    own = reverse("admin:auth_user_password_change", args=[deputy.user.id])
    assert deputy.post(own, NEW_PASSWORD).status_code == 302
