"""Creating answers 201 with the object (related objects named by their keys); a body the admin would refuse is
a 400 naming the field, with the admin's own message, because both ask the model's full_clean()."""

from __future__ import annotations

import json

import pytest
from django.contrib import admin
from django.test import RequestFactory

from probes.forms import NO_REGION
from probes.models import Probe, Region, Target
from tests.api.conftest import bearer
from tests.factories import RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db

TARGET = {
    "name": "Mistral Paris",
    "api_style": "openai",
    "url": "https://api.mistral.ai/v1/chat/completions",
    "model": "mistral-small-latest",
    "api_key_env": "MISTRAL_API_KEY",
    "headers": {"x-client": "atlas"},
}


def post(client, role, path: str, body: dict):
    return client.post(f"/api/v1/{path}/", body, content_type="application/json", **bearer(role.token))


def admin_errors(model, data: dict) -> dict:
    """What the admin's own form for `model` says about `data`."""
    model_admin = admin.site._registry[model]
    request = RequestFactory().post("/")
    form_class = model_admin.get_form(request)
    form = form_class(data={k: json.dumps(v) if isinstance(v, dict) else v for k, v in data.items()})
    assert not form.is_valid()
    return {field: [str(m) for m in messages] for field, messages in form.errors.items()}


def test_a_target_is_created_201_with_its_fields(client, roles):
    response = post(client, roles.editor, "targets", TARGET)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "Mistral Paris" and body["api_key_env"] == "MISTRAL_API_KEY"
    assert Target.objects.get(id=body["id"]).headers == {"x-client": "atlas"}


def test_a_target_with_a_bad_url_is_refused_with_the_admins_message(client, roles):
    bad = {**TARGET, "url": "ftp://api.mistral.ai/v1/chat/completions"}
    response = post(client, roles.editor, "targets", bad)
    assert response.status_code == 400
    assert response.json() == {"url": admin_errors(Target, bad)["url"]}
    assert "URL must start with http:// or https://" in response.json()["url"][0]
    assert not Target.objects.filter(name="Mistral Paris").exists()


def test_a_key_in_a_header_or_the_url_is_refused_as_in_the_admin(client, roles):
    literal = {**TARGET, "headers": {"Authorization": "Bearer sk-live-123"}}
    response = post(client, roles.editor, "targets", literal)
    assert response.status_code == 400
    assert response.json()["headers"] == admin_errors(Target, literal)["headers"]
    in_url = {**TARGET, "url": "https://generativelanguage.googleapis.com/v1beta?key=AIza123"}
    response = post(client, roles.editor, "targets", in_url)
    assert response.status_code == 400
    assert "api_key_env" in response.json()["url"][0]
    assert not Target.objects.exists()


def test_the_models_own_clean_speaks_for_the_field_it_names(client, roles):
    no_model = {**TARGET, "model": ""}
    response = post(client, roles.editor, "targets", no_model)
    assert response.status_code == 400
    assert list(response.json()) == ["model"]


def test_a_duplicate_name_is_refused_naming_the_field(client, roles):
    TargetFactory(name="Mistral Paris")
    response = post(client, roles.editor, "targets", TARGET)
    assert response.status_code == 400
    assert list(response.json()) == ["name"]


def test_a_probe_is_created_by_its_targets_name_and_its_regions_slugs(client, roles):
    target = TargetFactory(name="Claude")
    lagos, tokyo = RegionFactory(slug="zz-lagos"), RegionFactory(slug="zz-tokyo")
    body = {"target": "Claude", "name": "hello", "regions": ["zz-lagos", "zz-tokyo"], "interval_seconds": 60}
    response = post(client, roles.editor, "probes", body)
    assert response.status_code == 201, response.content
    assert response.json()["target"] == "Claude"
    assert sorted(response.json()["regions"]) == ["zz-lagos", "zz-tokyo"]
    probe = Probe.objects.get(id=response.json()["id"])
    assert probe.target == target and set(probe.regions.all()) == {lagos, tokyo}


def test_a_probe_without_regions_or_with_a_timeout_past_its_interval_is_refused(client, roles):
    TargetFactory(name="Claude")
    RegionFactory(slug="zz-lagos")
    response = post(client, roles.editor, "probes", {"target": "Claude", "name": "p", "regions": []})
    assert response.status_code == 400
    assert response.json() == {"regions": [NO_REGION]}
    slow = {"target": "Claude", "name": "p", "regions": ["zz-lagos"], "interval_seconds": 30, "timeout_seconds": 45}
    response = post(client, roles.editor, "probes", slow)
    assert response.status_code == 400
    assert "shorter than the interval" in response.json()["timeout_seconds"][0]
    assert not Probe.objects.exists()


def test_a_region_with_a_lower_case_country_is_refused_with_the_models_message(client, roles):
    body = {"slug": "zz-lima", "name": "Lima", "city": "Lima", "country": "pe", "latitude": -12.0, "longitude": -77.0}
    response = post(client, roles.editor, "regions", body)
    assert response.status_code == 400
    assert response.json()["country"] == admin_errors(Region, body)["country"]
