"""A staff user who may add and change groups (not a superuser) cannot give a group permissions, not their
own group, not another, not a new one: the permissions are not on their form, and a form posting them is
refused with the group's permissions unchanged. They may still rename a group; a superuser still grants."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def deputy(staff):
    deputy = staff("view_group", "add_group", "change_group")
    own = Group.objects.create(name="Deputies")
    own.permissions.add(Permission.objects.get(codename="view_group"))
    deputy.user.groups.add(own)
    return deputy


def every_permission() -> list[str]:
    return [str(p.id) for p in Permission.objects.all()]


def test_the_form_has_no_permissions(deputy):
    html = deputy.client.get(reverse("admin:auth_group_change", args=[deputy.user.groups.get().id])).content.decode()
    assert 'name="name"' in html and 'name="permissions"' not in html


@pytest.mark.parametrize("whose", ["own", "other"])
def test_a_group_cannot_be_given_permissions(deputy, whose):
    group = deputy.user.groups.get() if whose == "own" else Group.objects.create(name="Readers")
    before = set(group.permissions.all())
    url = reverse("admin:auth_group_change", args=[group.id])
    response = deputy.post(url, {"name": group.name, "permissions": every_permission()})
    assert response.status_code == 403
    assert set(group.permissions.all()) == before
    deputy.user.refresh_from_db()
    assert not deputy.user.has_perm("auth.change_user")


def test_a_new_group_cannot_come_with_permissions(deputy):
    response = deputy.post(reverse("admin:auth_group_add"), {"name": "Mighty", "permissions": every_permission()})
    assert response.status_code == 403
    assert not Group.objects.filter(name="Mighty").exists()


def test_a_group_can_still_be_renamed(deputy):
    group = deputy.user.groups.get()
    response = deputy.post(reverse("admin:auth_group_change", args=[group.id]), {"name": "Seconds"})
    assert response.status_code == 302
    group.refresh_from_db()
    assert group.name == "Seconds" and list(group.permissions.values_list("codename", flat=True)) == ["view_group"]


def test_a_superuser_still_grants_permissions(admin_client):
    group = Group.objects.create(name="Readers")
    permission = Permission.objects.get(codename="view_measurement")
    response = admin_client.post(
        reverse("admin:auth_group_change", args=[group.id]), {"name": "Readers", "permissions": [permission.id]}
    )
    assert response.status_code == 302
    assert list(group.permissions.all()) == [permission]
