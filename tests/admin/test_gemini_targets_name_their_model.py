"""A Gemini target whose URL names the model shows that model wherever targets are listed (it was blank:
the model lived only in the URL path), and the demo's Gemini target names its model like the others."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from devtools.demo_seed import TARGETS, seed
from probes.engine import measure
from probes.models import Region, Target
from tests.factories import MeasurementFactory

pytestmark = pytest.mark.django_db

FLASH_URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent"


def test_a_blank_model_is_taken_from_the_url():
    target = Target(name="Gemini", api_style="gemini", url=FLASH_URL, model="")
    target.full_clean()
    assert target.model == "gemini-2.0-flash"


def test_a_model_that_disagrees_with_the_url_is_refused():
    target = Target(name="Gemini", api_style="gemini", url=FLASH_URL, model="gemini-1.5-pro")
    with pytest.raises(ValidationError) as info:
        target.full_clean()
    assert "The URL names the model gemini-2.0-flash" in info.value.message_dict["model"][0]


def test_the_admin_stores_and_lists_the_model_of_the_url(admin_client):
    data = {
        "name": "Gemini Flash",
        "api_style": "gemini",
        "url": FLASH_URL,
        "model": "",
        "headers": "{}",
        "http_version": "1.1",
    }
    response = admin_client.post(reverse("admin:probes_target_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Target.objects.get().model == "gemini-2.0-flash"
    listing = admin_client.get(reverse("admin:probes_target_changelist")).content.decode()
    assert '<td class="field-model">gemini-2.0-flash</td>' in listing


def test_every_demo_target_names_its_model():
    assert all(model for _name, _style, _path, model, *_rest in TARGETS)


def test_the_demo_gemini_target_shows_its_model_and_is_called_with_it(admin_client, mockllm):
    seed(mockllm.base_url, list(Region.objects.filter(active=True)[:1]))
    gemini = Target.objects.get(api_style="gemini")
    assert gemini.model == "demo-gemini"
    gemini.full_clean()  # the stored target passes its own rules

    MeasurementFactory(probe=gemini.probes.get(), region=Region.objects.filter(active=True).first())
    assert "<code>demo-gemini</code>" in admin_client.get(f"/targets/{gemini.id}/").content.decode()
    table = admin_client.get(f"/api/table?target={gemini.id}&window=1h").json()
    assert {row["model"] for row in table["rows"]} == {"demo-gemini"}

    # The demo's URL asks the mock for a 2% share of 500s; this one call turns that off so that it
    # tests the model, not the dice.
    rid = uuid.uuid4().hex
    spec = gemini.probes.get().spec()
    url = spec.url.replace("fault=500", "fault=none")
    spec = dataclasses.replace(spec, url=url, headers={"x-mock-request-id": rid})
    result = asyncio.run(measure(spec))
    assert result.outcome == "ok", result.error
    assert mockllm.log_record(rid)["model"] == "demo-gemini"
