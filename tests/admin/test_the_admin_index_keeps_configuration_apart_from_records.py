"""The admin's index groups its models by what an administrator comes for: configuration (targets, probes, regions,
rules, channels, ingest sources), records (measurements, dead letters, incidents, workers) and users and access; an
app's own page still lists that app."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def groups(client) -> dict[str, set[str]]:
    apps = client.get(reverse("admin:index")).context["app_list"]
    return {str(app["name"]): {m["object_name"] for m in app["models"]} for app in apps}


def test_the_index_has_configuration_records_and_access_apart(admin_client):
    found = groups(admin_client)
    assert list(found) == ["Configuration", "Records", "Users and access"]
    assert {"Target", "Probe", "Region", "AlertRule", "NotificationChannel", "IngestSource"} <= found["Configuration"]
    assert {"Measurement", "DeadLetter", "Incident", "Worker"} <= found["Records"]
    assert {"User", "Group", "ApiToken", "RegionKey"} <= found["Users and access"]
    # Each model is listed once.
    names = [name for models in found.values() for name in models]
    assert len(names) == len(set(names))
    assert not found["Configuration"] & {"Measurement", "DeadLetter", "Incident", "Worker", "User"}


def test_an_apps_own_page_lists_that_app_as_django_does(admin_client):
    apps = admin_client.get(reverse("admin:app_list", args=["probes"])).context["app_list"]
    assert [app["app_label"] for app in apps] == ["probes"]


def test_a_staff_user_sees_only_the_models_they_may_view(client, django_user_model):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("viewer", password="a-long-test-password-5512", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_target"))
    client.force_login(user)
    assert groups(client) == {"Configuration": {"Target"}}
