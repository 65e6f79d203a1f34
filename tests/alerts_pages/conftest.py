"""Users of the incidents pages' tests: a reader without permissions, and one given some."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission


@pytest.fixture
def viewer(client, django_user_model):
    """A signed-in user without special permissions, on the test's `client`."""
    user = django_user_model.objects.create_user(username="viewer", password="a-long-test-password-9931")
    client.force_login(user)
    return user


@pytest.fixture
def grant():
    """grant(user, "probes.acknowledge_incident", ...): the user now holds those permissions."""

    def give(user, *names: str):
        for name in names:
            app_label, codename = name.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        # has_perm caches a user's permissions on the object: a fresh copy reads them again.
        return type(user).objects.get(pk=user.pk)

    return give
