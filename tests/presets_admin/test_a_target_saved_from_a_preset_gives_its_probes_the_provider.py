"""A target saved from each preset family (Azure with its deployment URL or the v1 form, a cloud provider with
its key variable, a self-hosted server without a key) is stored with its preset, and its probes carry the
preset to the engine in their spec."""

import pytest
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import form_errors, target_data
from tests.factories import ProbeFactory

ADD = "admin:probes_target_add"

SAVES = {
    "azure-deployment-url": {
        "provider": "azure-openai",
        "url": "https://contoso.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21",
        "api_key_env": "AZURE_OPENAI_API_KEY",
    },
    "azure-v1-url": {
        "provider": "azure-openai",
        "url": "https://contoso.openai.azure.com/openai/v1/chat/completions",
        "api_key_env": "AZURE_OPENAI_API_KEY",
    },
    "cloud-provider-with-its-key": {
        "provider": "mistral",
        "url": "https://api.mistral.ai/v1/chat/completions",
        "api_key_env": "MISTRAL_API_KEY",
        "model": "mistral-small-latest",
    },
    "self-hosted-without-a-key": {
        "provider": "llamacpp",
        "url": "http://gpu-box.internal:8080/v1/chat/completions",
        "api_key_env": "",
        "model": "local-model",
    },
    "vllm-started-without-api-key": {
        "provider": "vllm",
        "url": "http://gpu-box.internal:8000/v1/chat/completions",
        "api_key_env": "",
    },
    "cloud-key-carried-by-a-header-reference": {
        "provider": "deepseek",
        "url": "https://api.deepseek.com/chat/completions",
        "api_key_env": "",
        "headers": '{"Authorization": "Bearer ${DEEPSEEK_TOKEN}"}',
    },
}


@pytest.mark.parametrize("overrides", SAVES.values(), ids=SAVES.keys())
def test_a_target_saved_from_a_preset_gives_its_probes_the_provider(admin_client, overrides):
    response = admin_client.post(reverse(ADD), target_data(**overrides))
    assert response.status_code == 302, form_errors(response)
    target = Target.objects.get()
    assert target.provider == overrides["provider"]
    spec = ProbeFactory(target=target).spec()
    assert (spec.provider, spec.url, spec.api_key_env) == (
        overrides["provider"],
        overrides["url"],
        overrides["api_key_env"],
    )


def test_a_custom_target_is_untouched_by_the_preset_rules(admin_client):
    # No preset: no key is demanded, and a bearer header beside api_key_env stays the user's business.
    data = target_data(api_key_env="", url="https://gateway.example.com/v1/chat/completions")
    response = admin_client.post(reverse(ADD), data)
    assert response.status_code == 302, form_errors(response)
    assert ProbeFactory(target=Target.objects.get()).spec().provider == ""
