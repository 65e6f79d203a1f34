"""Objectives sit in the admin's Configuration group, their list reading what each covers, where from, its good
call, objective, window and since when its counts are exact; their hourly counts sit in Records, readable and
never added, changed or deleted there (only ingest and the rebuild write them)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import (
    ModelGroupFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    SLOHourCountFactory,
    TargetFactory,
)

pytestmark = pytest.mark.django_db


def test_objectives_are_configuration_and_counts_are_records(admin_client):
    apps = admin_client.get(reverse("admin:index")).context["app_list"]
    found = {str(app["name"]): {m["object_name"] for m in app["models"]} for app in apps}
    assert "ServiceLevelObjective" in found["Configuration"]
    assert "SLOHourCount" in found["Records"]


def test_the_list_reads_each_objectives_scope_good_call_and_objective(admin_client):
    RegionFactory(slug="zz-paris")
    ServiceLevelObjectiveFactory(
        name="chat fast",
        targets=[TargetFactory(name="gpt-eu"), TargetFactory(name="claude-eu")],
        regions=[RegionFactory(slug="zz-lima")],
        ttft_threshold_ms=800.0,
        tpot_threshold_ms=40.0,
        degraded_ttft_threshold_ms=500.0,
        objective_percent="99.9000",
    )
    ServiceLevelObjectiveFactory(
        name="group mix", model_group=ModelGroupFactory(name="gpt-4o"), mix={"zz-paris": 70.0, "zz-lima": 30.0}
    )

    page = admin_client.get(reverse("admin:probes_servicelevelobjective_changelist")).content.decode()

    for text in (
        "claude-eu, gpt-eu",
        "zz-lima",
        "TTFT ≤ 800 ms, TPOT ≤ 40 ms; degraded above 500 ms",
        "99.9",
        "model group gpt-4o",
        "mix: zz-lima 30, zz-paris 70",
        "rolling 30 days",
    ):
        assert text in page, text


def test_counts_are_read_but_never_added_changed_or_deleted_in_the_admin(admin_client):
    count = SLOHourCountFactory(good=41, bad=3)
    changelist = admin_client.get(reverse("admin:probes_slohourcount_changelist"))
    assert changelist.status_code == 200 and "41" in changelist.content.decode()
    assert admin_client.get(reverse("admin:probes_slohourcount_add")).status_code == 403
    page = admin_client.get(reverse("admin:probes_slohourcount_change", args=[count.pk]))
    assert page.status_code == 200 and not page.context["has_change_permission"]
    assert (
        admin_client.post(reverse("admin:probes_slohourcount_delete", args=[count.pk]), {"post": "yes"}).status_code
        == 403
    )
    count.refresh_from_db()
    assert count.good == 41
