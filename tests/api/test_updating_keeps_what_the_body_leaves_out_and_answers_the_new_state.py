"""PATCH changes what the body names and keeps the rest; PUT replaces the object; both answer its new state
(regions included) and check the whole object with the model's rules, as the admin's change form does."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer
from tests.factories import ProbeFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_patching_a_probes_regions_answers_and_stores_them(client, roles):
    old, new = RegionFactory(slug="zz-old"), RegionFactory(slug="zz-new")
    probe = ProbeFactory(regions=[old], interval_seconds=120, timeout_seconds=30)
    url = f"/api/v1/probes/{probe.id}/"
    response = client.patch(url, {"regions": ["zz-new"]}, content_type="application/json", **bearer(roles.editor.token))
    assert response.status_code == 200, response.content
    assert response.json()["regions"] == ["zz-new"]
    assert response.json()["interval_seconds"] == 120
    assert list(probe.regions.all()) == [new]
    assert client.get(url, **bearer(roles.viewer.token)).json()["regions"] == ["zz-new"]


def test_a_patch_that_breaks_a_rule_across_fields_is_refused_and_changes_nothing(client, roles):
    probe = ProbeFactory(interval_seconds=120, timeout_seconds=60)
    response = client.patch(
        f"/api/v1/probes/{probe.id}/",
        {"interval_seconds": 30},
        content_type="application/json",
        **bearer(roles.editor.token),
    )
    assert response.status_code == 400
    assert "timeout_seconds" in response.json()
    probe.refresh_from_db()
    assert probe.interval_seconds == 120


def test_a_gemini_target_whose_url_names_the_model_gets_that_model(client, roles):
    target = TargetFactory(api_style="openai")
    body = {
        "name": target.name,
        "api_style": "gemini",
        "url": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        "model": "",
        "api_key_env": "GEMINI_API_KEY",
    }
    response = client.put(
        f"/api/v1/targets/{target.id}/", body, content_type="application/json", **bearer(roles.editor.token)
    )
    assert response.status_code == 200, response.content
    # What the model's clean() filled in is what is saved and answered.
    assert response.json()["model"] == "gemini-2.5-flash"
    target.refresh_from_db()
    assert target.model == "gemini-2.5-flash" and target.api_style == "gemini"
