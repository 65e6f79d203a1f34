"""A staff user who may add and change users (not a superuser) never sees is_superuser, is_staff, groups or
user permissions in the user admin, and a form posting them anyway is refused with nothing changed: not on
their own account, not on another's, not on a user they add. What they may do still works (an e-mail
address changed, a user added without rights). A superuser still grants rights."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from tests.admin.conftest import user_form

pytestmark = pytest.mark.django_db

RIGHTS_INPUTS = ('name="is_superuser"', 'name="is_staff"', 'name="groups"', 'name="user_permissions"')


def rights(user) -> tuple:
    user.refresh_from_db()
    return user.is_superuser, user.is_staff, set(user.groups.all()), set(user.user_permissions.all())


@pytest.fixture
def mighty_group():
    group = Group.objects.create(name="Everything")
    group.permissions.set(Permission.objects.all())
    return group


def raised(mighty_group) -> dict:
    """Every right a form could hand out, as posted fields."""
    return {
        "is_superuser": "on",
        "is_staff": "on",
        "groups": [str(mighty_group.id)],
        "user_permissions": [str(p.id) for p in Permission.objects.all()],
    }


def test_the_change_form_and_the_list_show_no_rights(staff):
    deputy = staff("view_user", "change_user")
    html = deputy.client.get(reverse("admin:auth_user_change", args=[deputy.user.id])).content.decode()
    assert 'name="email"' in html
    assert [name for name in RIGHTS_INPUTS if name in html] == []
    listing = deputy.client.get(reverse("admin:auth_user_changelist")).content.decode()
    assert "is_superuser" not in listing and "is_staff" not in listing and "groups__id" not in listing
    # Nor may the list be filtered by them by hand.
    assert deputy.client.get(reverse("admin:auth_user_changelist") + "?is_superuser__exact=1").status_code == 400


def test_their_own_account_cannot_be_raised(staff, mighty_group):
    deputy = staff("view_user", "change_user")
    before = rights(deputy.user)
    url = reverse("admin:auth_user_change", args=[deputy.user.id])
    response = deputy.post(url, user_form(deputy.user, **raised(mighty_group)))
    assert response.status_code == 403
    assert rights(deputy.user) == before
    assert not deputy.user.is_superuser


def test_another_account_cannot_be_raised(staff, django_user_model, mighty_group):
    deputy = staff("view_user", "change_user")
    plain = django_user_model.objects.create_user("plain", "plain@example.org", "a-long-password-8812")
    url = reverse("admin:auth_user_change", args=[plain.id])
    response = deputy.post(url, user_form(plain, **raised(mighty_group)))
    assert response.status_code == 403
    assert rights(plain) == (False, False, set(), set())


def test_what_they_may_change_still_changes(staff):
    deputy = staff("view_user", "change_user")
    url = reverse("admin:auth_user_change", args=[deputy.user.id])
    response = deputy.post(url, user_form(deputy.user, email="new@example.org"))
    assert response.status_code == 302, response.context["adminform"].form.errors
    deputy.user.refresh_from_db()
    assert deputy.user.email == "new@example.org"


def test_a_user_added_with_rights_is_refused(staff, django_user_model, mighty_group):
    deputy = staff("view_user", "add_user", "change_user")
    password = "Xy7!long-pass"
    form = {"username": "newcomer", "usable_password": "true", "password1": password, "password2": password}
    response = deputy.post(reverse("admin:auth_user_add"), {**form, **raised(mighty_group)})
    assert response.status_code == 403
    assert not django_user_model.objects.filter(username="newcomer").exists()

    response = deputy.post(reverse("admin:auth_user_add"), form)
    assert response.status_code == 302
    assert rights(django_user_model.objects.get(username="newcomer")) == (False, False, set(), set())


def test_a_superuser_still_grants_rights(admin_client, django_user_model, mighty_group):
    plain = django_user_model.objects.create_user("plain", "plain@example.org", "a-long-password-8812")
    html = admin_client.get(reverse("admin:auth_user_change", args=[plain.id])).content.decode()
    assert all(name in html for name in RIGHTS_INPUTS)
    response = admin_client.post(
        reverse("admin:auth_user_change", args=[plain.id]), user_form(plain, is_staff="on", groups=[mighty_group.id])
    )
    assert response.status_code == 302
    assert rights(plain)[1:3] == (True, {mighty_group})
