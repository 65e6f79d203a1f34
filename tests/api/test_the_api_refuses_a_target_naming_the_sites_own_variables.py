"""The API refuses, with a 400 naming the field and the admin's reason, a target (created or changed) whose key
variable or ${VAR} header names one of the site's own variables, or whose CA bundle is a path outside the
workers' LATENCY_CA_DIR: a token with target rights chooses where the workers send what a target names."""

from __future__ import annotations

import pytest

from probes.models import Target
from tests.api.conftest import bearer
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db

TARGET = {
    "name": "collector",
    "api_style": "openai",
    "url": "https://collector.example.org/v1/chat/completions",
    "model": "m",
    "api_key_env": "OPENAI_API_KEY",
}
SITE_VARIABLES = ["LATENCY_REGION_KEY_EU_LONDON", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "X_FILE"]


def send(client, role, method: str, path: str, body: dict):
    return getattr(client, method)(f"/api/v1/{path}", body, content_type="application/json", **bearer(role.token))


def bad_fields(name: str, where: str) -> dict:
    if where == "api_key_env":
        return {"api_key_env": name}
    return {"headers": {"X-Forward": f"${{{name}}}"}}


@pytest.mark.parametrize("where", ["api_key_env", "headers"])
@pytest.mark.parametrize("name", SITE_VARIABLES)
def test_creating_or_changing_a_target_to_name_a_site_variable_is_a_400(client, roles, name, where):
    created = send(client, roles.editor, "post", "targets/", {**TARGET, **bad_fields(name, where)})
    assert created.status_code == 400, created.content
    [message] = created.json()[where]
    assert name in message and "one of the site's own variables" in message
    assert not Target.objects.filter(name="collector").exists()

    target = TargetFactory(name="existing", api_key_env="OPENAI_API_KEY")
    changed = send(client, roles.editor, "patch", f"targets/{target.pk}/", bad_fields(name, where))
    assert changed.status_code == 400, changed.content
    assert list(changed.json()) == [where]
    target.refresh_from_db()
    assert (target.api_key_env, target.headers) == ("OPENAI_API_KEY", {})


def test_a_ca_bundle_outside_the_workers_directory_is_a_400(client, roles):
    response = send(client, roles.editor, "post", "targets/", {**TARGET, "ca_bundle": "/etc/ssl/private/server.key"})
    assert response.status_code == 400, response.content
    [message] = response.json()["ca_bundle"]
    assert "LATENCY_CA_DIR" in message
