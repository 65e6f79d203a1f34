"""Model groups in the admin: added and edited like any object; groups suggested from targets whose model
names name the same model (probes.modelgroups.suggest.model_key) are listed above the groups, and one is created
only when its button is clicked, by a user allowed to add groups."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from probes.modelgroups.suggest import model_key
from probes.models import ModelGroup
from tests.factories import ModelGroupFactory, TargetFactory

pytestmark = pytest.mark.django_db
LIST = "/admin/probes/modelgroup/"
CREATE = "/admin/probes/modelgroup/suggested/"


@pytest.mark.parametrize(
    ("names", "same"),
    [
        (["meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b-versatile"], True),
        (["accounts/fireworks/models/llama-v3p1-70b-instruct", "Llama3.1-70B"], True),
        (["gpt-4o-2024-08-06", "gpt-4o", "GPT-4o"], True),
        (["anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet@20240620", "claude-3.5-sonnet-latest"], True),
        (["gpt-4-0613", "gpt-4"], True),
        (["gpt-4-turbo", "gpt-4"], False),
        (["llama-3.1-70b", "llama-3.1-8b"], False),
        (["gpt-4o-mini", "gpt-4o"], False),
    ],
)
def test_model_names_are_normalised_by_the_documented_rule(names, same):
    keys = {model_key(name) for name in names}
    assert (len(keys) == 1) is same, keys


@pytest.fixture
def targets():
    return [
        TargetFactory(name="Groq 70B", model="llama-3.1-70b-versatile"),
        TargetFactory(name="Together 70B", model="meta-llama/Meta-Llama-3.1-70B-Instruct"),
        TargetFactory(name="OpenAI 4o", model="gpt-4o-2024-08-06"),
        TargetFactory(name="Alone", model="mistral-large"),
    ]


def test_suggestions_are_shown_and_nothing_is_created_by_looking(admin_client, targets):
    page = admin_client.get(LIST)

    assert page.status_code == 200
    text = page.content.decode()
    assert "Suggested groups" in text
    assert "Groq 70B, Together 70B" in text
    assert "OpenAI 4o" not in text.split("Suggested groups")[1].split("</section>")[0]
    assert ModelGroup.objects.count() == 0


def test_one_click_creates_the_group_and_the_suggestion_goes(admin_client, targets):
    key = model_key("llama-3.1-70b-versatile")

    response = admin_client.post(CREATE, {"key": key})

    assert response.status_code == 302
    group = ModelGroup.objects.get()
    assert sorted(t.name for t in group.targets.all()) == ["Groq 70B", "Together 70B"]
    assert group.name == "llama-3.1-70b-versatile"
    assert "Suggested groups" not in admin_client.get(LIST).content.decode()
    # The same click again finds no suggestion and creates nothing.
    admin_client.post(CREATE, {"key": key})
    assert ModelGroup.objects.count() == 1


def test_a_user_who_may_not_add_groups_sees_no_suggestion_and_cannot_create(django_user_model, targets):
    user = django_user_model.objects.create_user("reader", "reader@example.org", "a-long-password-4471")
    user.is_staff = True
    user.save()
    user.user_permissions.add(Permission.objects.get(codename="view_modelgroup"))
    client = Client()
    client.force_login(user)

    assert "Suggested groups" not in client.get(LIST).content.decode()
    assert client.post(CREATE, {"key": model_key("gpt-4o")}).status_code == 403
    assert ModelGroup.objects.count() == 0


def test_groups_are_added_and_edited_in_the_admin(admin_client, targets):
    groq, together, _openai, _alone = targets
    added = admin_client.post(
        "/admin/probes/modelgroup/add/", {"name": "Llama 3.1 70B", "targets": [groq.id, together.id]}
    )
    assert added.status_code == 302
    group = ModelGroup.objects.get(name="Llama 3.1 70B")
    changed = admin_client.post(
        f"/admin/probes/modelgroup/{group.id}/change/", {"name": "Llama 3.1 70B", "targets": [groq.id]}
    )
    assert changed.status_code == 302
    assert [t.name for t in group.targets.all()] == ["Groq 70B"]
    duplicate = admin_client.post("/admin/probes/modelgroup/add/", {"name": "Llama 3.1 70B", "targets": []})
    assert duplicate.status_code == 200 and ModelGroup.objects.count() == 1
    ModelGroupFactory(name="Everything", targets=targets)
    # A group already holding every suggested target: nothing is suggested any more.
    assert "Suggested groups" not in admin_client.get(LIST).content.decode()
