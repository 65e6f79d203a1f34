"""A target's headers typed in the admin as JSON nested deeper than the site reads (100,000 `[`, or a document
shallow enough to parse but 200 levels deep) are a form error on the field, shown back as typed, never a 500;
nothing is stored."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from probes.models import Target

pytestmark = pytest.mark.django_db

FORM = {
    "name": "Deep headers",
    "api_style": "openai",
    "url": "https://api.openai.com/v1/chat/completions",
    "model": "gpt-4o-mini",
    "api_key_env": "OPENAI_API_KEY",
    "http_version": "1.1",
}


def deep(levels: int) -> str:
    value: dict = {"X-Leaf": "v"}
    for _ in range(levels):
        value = {"X-Deeper": value}
    return json.dumps(value)


@pytest.mark.parametrize("headers", ["[" * 100_000, deep(200)], ids=["brackets", "parsable"])
def test_deep_headers_are_refused_on_the_field(admin_client, headers):
    response = admin_client.post(reverse("admin:probes_target_add"), {**FORM, "headers": headers})
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["headers"]
    assert errors["headers"] == ["This JSON nests deeper than 32 levels."]
    assert headers[:50] in response.content.decode().replace("&quot;", '"')
    assert not Target.objects.exists()


def test_flat_headers_are_still_stored(admin_client):
    response = admin_client.post(reverse("admin:probes_target_add"), {**FORM, "headers": '{"X-Team": "atlas"}'})
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Target.objects.get().headers == {"X-Team": "atlas"}
