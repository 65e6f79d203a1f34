"""Fixtures shared with the dashboard's tests."""

import pytest

from tests.web.conftest import viewer  # noqa: F401  (a signed-in user on the test's client)


@pytest.fixture
def fleet_viewer(viewer):  # noqa: F811  (the imported fixture, extended)
    """`viewer` with probes.view_worker: who sees the workers themselves, not only their regions' status
    (latency.access.may_see_workers)."""
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_worker"))
    return viewer
