"""/api/v1/slos/: an objective is created, listed, read, changed (whole or in part) and deleted, its targets,
regions and model group by id and its mix as an object; a body the admin would refuse is a 400 naming the field,
with the admin's own message; reading needs the view permission and writing the admin's add, change or delete
permission. A change of the good call empties the counts made under the old one, as in the admin."""

from __future__ import annotations

import pytest

from probes.models import ServiceLevelObjective, SLOHourCount
from tests.api.conftest import bearer
from tests.factories import (
    ModelGroupFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    SLOHourCountFactory,
    TargetFactory,
)

pytestmark = pytest.mark.django_db
LIST = "/api/v1/slos/"


def body(**changes) -> dict:
    return {"name": "chat p99", "ttft_threshold_ms": 800, "objective_percent": 99.5, **changes}


def send(client, method: str, role, url: str, data: dict | None = None):
    call = getattr(client, method)
    if data is None:
        return call(url, **bearer(role.token))
    return call(url, data, content_type="application/json", **bearer(role.token))


def test_an_objective_is_created_read_listed_changed_and_deleted(client, roles):
    gpt, claude = TargetFactory(name="gpt-eu"), TargetFactory(name="claude-eu")
    lima = RegionFactory(slug="zz-lima")

    created = send(client, "post", roles.editor, LIST, body(targets=[gpt.pk, claude.pk], regions=[lima.pk]))

    assert created.status_code == 201, created.content
    answer = created.json()
    assert sorted(answer["targets"]) == sorted([gpt.pk, claude.pk]) and answer["regions"] == [lima.pk]
    assert answer["model_group"] is None and answer["mix"] == {}
    assert answer["objective_percent"] == 99.5 and answer["window"] == "rolling_30d"
    assert answer["exclude_silences"] is True and answer["exclude_rate_limited"] is False
    assert answer["exact_since"] is None
    url = f"{LIST}{answer['id']}/"
    assert send(client, "get", roles.viewer, url).json() == answer
    assert [row["name"] for row in send(client, "get", roles.viewer, LIST).json()["results"]] == ["chat p99"]

    group = ModelGroupFactory(targets=[gpt])
    changed = send(
        client,
        "put",
        roles.editor,
        url,
        body(model_group=group.pk, targets=[], regions=[], mix={"zz-lima": 3, "eu-london": 1}, tpot_threshold_ms=40),
    )
    assert changed.status_code == 200, changed.content
    objective = ServiceLevelObjective.objects.get(pk=answer["id"])
    assert objective.model_group == group and not objective.targets.exists() and not objective.regions.exists()
    assert objective.mix == {"zz-lima": 3.0, "eu-london": 1.0} and objective.tpot_threshold_ms == 40

    patched = send(client, "patch", roles.editor, url, {"enabled": False})
    assert patched.status_code == 200 and patched.json()["model_group"] == group.pk
    assert send(client, "delete", roles.editor, url).status_code == 204
    assert not ServiceLevelObjective.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({}, "targets", "Choose the targets this objective covers, or a model group."),
        ({"targets": "both"}, "model_group", "Choose targets or a model group, not both."),
        ({"regions": "one", "mix": {"eu-london": 1}}, "mix", "Give regions or a mix of users, not both"),
        ({"mix": {"nowhere": 1}}, "mix", "No region has the slug 'nowhere'."),
        ({"mix": {"eu-london": 0}}, "mix", "The share of eu-london must be a number above 0"),
        ({"degraded_ttft_threshold_ms": 800}, "degraded_ttft_threshold_ms", "must be below the TTFT threshold"),
        ({"objective_percent": 100}, "objective_percent", "The objective must be above 0 and below 100"),
        ({"objective_percent": 0}, "objective_percent", "The objective must be above 0 and below 100"),
        ({"targets": [987654]}, "targets", "Invalid pk"),
        ({"model_group": 2**70}, "model_group", "Invalid pk"),
        ({"window": "weekly"}, "window", "is not a valid choice"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_field(client, roles, changes, field, message):
    target, region, group = TargetFactory(), RegionFactory(), ModelGroupFactory()
    named = dict(changes)
    if named.get("targets") == "both":
        named.update(targets=[target.pk], model_group=group.pk)
    named.setdefault("targets", [target.pk] if field != "targets" else [])
    if named.get("regions") == "one":
        named["regions"] = [region.pk]

    response = send(client, "post", roles.editor, LIST, body(**named))

    assert response.status_code == 400, response.content
    assert list(response.json()) == [field], response.json()
    assert message in response.json()[field][0]
    assert not ServiceLevelObjective.objects.exists()


def test_a_partial_update_is_judged_with_what_it_leaves_out(client, roles):
    objective = ServiceLevelObjectiveFactory(regions=[RegionFactory()])
    response = send(client, "patch", roles.editor, f"{LIST}{objective.pk}/", {"mix": {"eu-london": 1}})
    assert response.status_code == 400 and list(response.json()) == ["mix"]
    response = send(client, "patch", roles.editor, f"{LIST}{objective.pk}/", {"degraded_ttft_threshold_ms": 900})
    assert response.status_code == 400 and list(response.json()) == ["degraded_ttft_threshold_ms"]


def test_a_change_of_the_good_call_empties_the_counts(client, roles, django_capture_on_commit_callbacks):
    objective = ServiceLevelObjectiveFactory()
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(counted_condition=objective.condition_fingerprint())
    SLOHourCountFactory(objective=objective)
    url = f"{LIST}{objective.pk}/"

    with django_capture_on_commit_callbacks(execute=True):
        assert send(client, "patch", roles.editor, url, {"name": "renamed"}).status_code == 200
    assert SLOHourCount.objects.filter(objective=objective).exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert send(client, "patch", roles.editor, url, {"ttft_threshold_ms": 700}).status_code == 200
    assert not SLOHourCount.objects.filter(objective=objective).exists()


def test_reading_needs_the_view_permission_and_writing_the_admins(client, roles):
    objective = ServiceLevelObjectiveFactory()
    url = f"{LIST}{objective.pk}/"
    assert client.get(LIST).status_code == 401
    assert send(client, "get", roles.nobody, LIST).status_code == 403
    assert send(client, "get", roles.nobody, url).status_code == 403
    assert send(client, "get", roles.viewer, url).status_code == 200
    new = body(targets=[objective.targets.get().pk], name="another")
    assert send(client, "post", roles.viewer, LIST, new).status_code == 403
    assert send(client, "patch", roles.viewer, url, {"name": "renamed"}).status_code == 403
    assert send(client, "delete", roles.viewer, url).status_code == 403
    objective.refresh_from_db()
    assert objective.name != "renamed" and ServiceLevelObjective.objects.count() == 1
