"""The admin offers the OpenAI Responses API as a style; a responses target
needs a model, like an openai one, and is stored with its style."""

from __future__ import annotations

import pytest
from django.urls import reverse

from probes.models import Target

pytestmark = pytest.mark.django_db

URL = "https://api.openai.com/v1/responses"


def test_the_style_choice_lists_responses(admin_client):
    page = admin_client.get(reverse("admin:probes_target_add")).content.decode()
    assert '<option value="responses">OpenAI Responses API</option>' in page


def test_a_responses_target_without_a_model_is_refused(admin_client):
    data = {"name": "Responses", "api_style": "responses", "url": URL, "model": "", "headers": "{}"}
    response = admin_client.post(reverse("admin:probes_target_add"), data)
    assert response.status_code == 200
    assert (
        "A model is required for the OpenAI Responses API style." in response.context["adminform"].form.errors["model"]
    )
    assert not Target.objects.exists()


def test_a_responses_target_with_a_model_is_stored(admin_client):
    data = {
        "name": "Responses",
        "api_style": "responses",
        "url": URL,
        "model": "gpt-5-mini",
        "headers": "{}",
        "http_version": "1.1",
    }
    response = admin_client.post(reverse("admin:probes_target_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Target.objects.values_list("api_style", "model").get() == ("responses", "gpt-5-mini")
