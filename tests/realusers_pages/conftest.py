"""Fixtures of the real-user page tests."""

from __future__ import annotations

import pytest

from probes.realusers import matching


@pytest.fixture
def viewer(client, django_user_model):
    """A signed-in user without special permissions, on the test's `client`."""
    user = django_user_model.objects.create_user(username="viewer", password="a-long-test-password-9931")
    client.force_login(user)
    return user


@pytest.fixture(autouse=True)
def _fresh_targets():
    # Targets made by a test are matched against from its first store on.
    matching.forget()
    yield
    matching.forget()
