"""A target may not name one of the site's own variables (the region's credential, the broker's and the database's
URLs, the secret key, a *_FILE) as its key variable or in a ${VAR} header: a staff member with only the right to
edit targets chooses the URL the workers send those values to. The model and the admin refuse it with the reason;
a variable of the target's own saves."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ValidationError
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import form_errors, target_data

ADD = "admin:probes_target_add"
SITE_VARIABLES = ["LATENCY_REGION_KEY_EU_LONDON", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "X_FILE", "CELERY_X"]
REASON = "one of the site's own variables"


@pytest.fixture
def target_editor(client, db):
    """Staff, not a superuser: may add and change targets, nothing else."""
    user = User.objects.create_user("editor", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=("add_target", "change_target", "view_target")))
    client.force_login(user)
    return client


def fields_for(name: str, where: str) -> dict:
    if where == "api_key_env":
        return {"api_key_env": name}
    return {"api_key_env": "", "headers": {"Authorization": f"Bearer ${{{name}}}", "X-Copy": f"${{{name}}}"}}


@pytest.mark.parametrize("where", ["api_key_env", "headers"])
@pytest.mark.parametrize("name", SITE_VARIABLES)
def test_the_model_refuses_a_site_variable_with_the_reason(db, name, where):
    target = Target(
        name="t", url="https://collector.example.org/v1/chat/completions", model="m", **fields_for(name, where)
    )
    with pytest.raises(ValidationError) as info:
        target.full_clean()
    [message] = info.value.message_dict[where]
    assert name in message and REASON in message


@pytest.mark.parametrize("where", ["api_key_env", "headers"])
@pytest.mark.parametrize("name", SITE_VARIABLES)
def test_the_admin_refuses_a_site_variable_from_a_target_editor(target_editor, name, where):
    fields = fields_for(name, where)
    if "headers" in fields:
        fields["headers"] = json.dumps(fields["headers"])
    response = target_editor.post(reverse(ADD), target_data(**fields))
    [message] = form_errors(response)[where]
    assert name in message and REASON in message
    assert not Target.objects.exists()


def test_a_variable_of_the_targets_own_saves(target_editor):
    response = target_editor.post(
        reverse(ADD),
        target_data(api_key_env="ACME_GATEWAY_KEY", headers=json.dumps({"X-Tenant": "${ACME_TENANT_TOKEN}"})),
    )
    assert response.status_code == 302, form_errors(response)
    assert Target.objects.get().api_key_env == "ACME_GATEWAY_KEY"
