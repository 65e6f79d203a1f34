"""/api/v1/status-pages/: a page is created, listed, read, changed (whole or in part) and deleted; its targets,
model groups and objectives are named by name and its regions by slug, as a probe's and a model group's are, and
its answer says where it is read (path). A name no object has is a 400 naming the field, and nothing is saved."""

from __future__ import annotations

import pytest

from probes.models import StatusPage
from tests.api.conftest import bearer
from tests.factories import (
    ModelGroupFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    StatusPageFactory,
    TargetFactory,
)

pytestmark = pytest.mark.django_db
LIST = "/api/v1/status-pages/"


def send(client, method: str, role, url: str, data: dict | None = None):
    call = getattr(client, method)
    if data is None:
        return call(url, **bearer(role.token))
    return call(url, data, content_type="application/json", **bearer(role.token))


def test_a_page_is_created_by_keys_read_listed_changed_and_deleted(client, roles):
    gpt, claude = TargetFactory(name="gpt-eu"), TargetFactory(name="claude-eu")
    lima = RegionFactory(slug="zz-lima")
    group = ModelGroupFactory(name="fast models", targets=[claude])
    objective = ServiceLevelObjectiveFactory(name="chat p99", targets=[gpt])
    body = {
        "slug": "acme",
        "title": "Acme APIs",
        "targets": ["gpt-eu"],
        "model_groups": ["fast models"],
        "regions": ["zz-lima"],
        "slos": ["chat p99"],
        "public": True,
    }

    created = send(client, "post", roles.editor, LIST, body)

    assert created.status_code == 201, created.content
    answer = created.json()
    assert answer["path"] == "/status/acme/"
    assert (answer["targets"], answer["model_groups"], answer["regions"], answer["slos"]) == (
        ["gpt-eu"],
        ["fast models"],
        ["zz-lima"],
        ["chat p99"],
    )
    assert answer["language"] == "en" and answer["show_latency"] is True
    assert answer["hostname"] == "" and answer["description"] == ""
    page = StatusPage.objects.get(pk=answer["id"])
    assert list(page.targets.all()) == [gpt] and list(page.model_groups.all()) == [group]
    assert list(page.regions.all()) == [lima] and list(page.slos.all()) == [objective]
    url = f"{LIST}{answer['id']}/"
    assert send(client, "get", roles.viewer, url).json() == answer
    assert [row["slug"] for row in send(client, "get", roles.viewer, LIST).json()["results"]] == ["acme"]

    replaced = send(
        client, "put", roles.editor, url, {"slug": "acme-status", "title": "Acme", "targets": ["claude-eu"]}
    )
    assert replaced.status_code == 200, replaced.content
    assert replaced.json()["path"] == "/status/acme-status/"
    page.refresh_from_db()
    assert page.slug == "acme-status" and list(page.targets.all()) == [claude]
    # A PUT that leaves a list out leaves it as stored (the model's blank=True: no list is required).
    assert list(page.regions.all()) == [lima]

    patched = send(client, "patch", roles.editor, url, {"regions": [], "language": "zh-hans"})
    assert patched.status_code == 200, patched.content
    assert patched.json()["regions"] == [] and patched.json()["targets"] == ["claude-eu"]
    assert StatusPage.objects.get(pk=page.pk).language == "zh-hans"

    assert send(client, "delete", roles.editor, url).status_code == 204
    assert not StatusPage.objects.exists()
    assert send(client, "get", roles.viewer, url).status_code == 404


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"targets": ["nowhere"]}, "targets", "Object with name=nowhere does not exist."),
        ({"regions": ["zz-nowhere"]}, "regions", "Object with slug=zz-nowhere does not exist."),
        ({"slos": ["no such objective"]}, "slos", "Object with name=no such objective does not exist."),
        ({"model_groups": ["no group"]}, "model_groups", "Object with name=no group does not exist."),
        ({"slug": "not a slug"}, "slug", "Enter a valid “slug”"),
        ({"slug": "taken"}, "slug", "already exists"),
        ({"language": "fr"}, "language", "is not a valid choice"),
        ({"title": ""}, "title", "may not be blank"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_field_and_nothing_is_saved(client, roles, changes, field, message):
    StatusPageFactory(slug="taken")

    response = send(client, "post", roles.editor, LIST, {"slug": "acme", "title": "Acme", **changes})

    assert response.status_code == 400, response.content
    assert list(response.json()) == [field], response.json()
    assert message in response.json()[field][0]
    assert list(StatusPage.objects.values_list("slug", flat=True)) == ["taken"]
