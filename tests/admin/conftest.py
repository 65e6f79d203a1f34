"""Fixtures of the admin's tests.

- `staff(*codenames)`: a staff user (no superuser) holding the given auth permissions ("change_user",
  "change_group", ...), signed in on a Django test client that checks CSRF as a browser's requests are
  checked: `.user`, `.client`, and `.post(url, data)`, which reads the page first (its CSRF cookie) and posts
  the form with the token, as the admin's own page does.
- `user_form(account, **changes)`: the fields of the user change form a non-superuser sees, filled from
  `account`, with `changes` on top.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Permission
from django.test import Client


@dataclass
class Staff:
    user: object
    client: Client

    def post(self, url: str, data: dict):
        page = self.client.get(url)
        token = self.client.cookies["csrftoken"].value if page.status_code == 200 else "no-page-no-token"
        return self.client.post(url, {**data, "csrfmiddlewaretoken": token})


@pytest.fixture
def staff(django_user_model):
    def make(*codenames: str, username: str = "deputy") -> Staff:
        user = django_user_model.objects.create_user(username, f"{username}@example.org", "a-long-password-4471")
        user.is_staff = True
        user.save()
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="auth", codename__in=codenames))
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        return Staff(user, client)

    return make


def user_form(account, **changes) -> dict:
    return {
        "username": account.username,
        "first_name": account.first_name,
        "last_name": account.last_name,
        "email": account.email,
        **({"is_active": "on"} if account.is_active else {}),
        "date_joined_0": f"{account.date_joined:%Y-%m-%d}",
        "date_joined_1": f"{account.date_joined:%H:%M:%S}",
        **changes,
    }
