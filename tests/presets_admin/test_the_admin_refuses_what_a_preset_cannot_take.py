"""The target add form refuses, on the field at fault, what a provider preset cannot take: a URL template
left with its {placeholders}, a style the preset does not speak, an Azure URL of the wrong shape, a cloud
preset with no key, a key sent twice. Nothing is saved."""

import json

import pytest
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import form_errors, target_data

ADD = "admin:probes_target_add"
AZURE_TEMPLATE = (
    "https://{resource}.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21"
)
AZURE_V1 = "https://contoso.openai.azure.com/openai/v1/chat/completions"
AZURE = {"provider": "azure-openai", "api_key_env": "AZURE_OPENAI_API_KEY"}

CASES = {
    "azure-template-left-as-is": ({**AZURE, "url": AZURE_TEMPLATE}, "url", ["{resource}", "{deployment}"]),
    "self-hosted-host-left-as-is": (
        {"provider": "vllm", "url": "http://{host}:8000/v1/chat/completions"},
        "url",
        ["{host}", "Replace"],
    ),
    "custom-target-with-a-placeholder": (
        {"url": "https://{gateway}.example.com/v1/chat/completions"},
        "url",
        ["{gateway}"],
    ),
    "style-the-preset-does-not-speak": (
        {"provider": "deepseek", "api_style": "anthropic", "url": "https://api.deepseek.com/chat/completions"},
        "api_style",
        ['DeepSeek speaks the "openai" style'],
    ),
    "azure-over-plain-http": (
        {**AZURE, "url": "http://contoso.openai.azure.com/openai/v1/chat/completions"},
        "url",
        ["https://"],
    ),
    "azure-deployment-without-api-version": (
        {**AZURE, "url": "https://contoso.openai.azure.com/openai/deployments/gpt4o/chat/completions"},
        "url",
        ["api-version"],
    ),
    "azure-path-of-plain-openai": (
        {**AZURE, "url": "https://contoso.openai.azure.com/v1/chat/completions"},
        "url",
        ["/openai/deployments/DEPLOYMENT/chat/completions", "/openai/v1/chat/completions"],
    ),
    "cloud-preset-without-a-key": (
        {"provider": "deepseek", "url": "https://api.deepseek.com/chat/completions", "api_key_env": ""},
        "api_key_env",
        ["DeepSeek needs a key: name the environment variable that holds it on the workers", "DEEPSEEK_API_KEY"],
    ),
    "azure-key-also-in-an-api-key-header": (
        {**AZURE, "url": AZURE_V1, "headers": json.dumps({"api-key": "${AZURE_OPENAI_API_KEY}"})},
        "headers",
        ['"api-key"', "AZURE_OPENAI_API_KEY"],
    ),
    "azure-key-and-a-bearer-token": (
        {**AZURE, "url": AZURE_V1, "headers": json.dumps({"Authorization": "Bearer ${ENTRA_TOKEN}"})},
        "headers",
        ['"Authorization"', "api-key header"],
    ),
    "groq-key-also-in-authorization": (
        {
            "provider": "groq",
            "url": "https://api.groq.com/openai/v1/chat/completions",
            "api_key_env": "GROQ_API_KEY",
            "headers": json.dumps({"authorization": "Bearer ${GROQ_API_KEY}"}),
        },
        "headers",
        ['"authorization"', "GROQ_API_KEY"],
    ),
}


@pytest.mark.parametrize("overrides, field, words", CASES.values(), ids=CASES.keys())
def test_the_admin_refuses_what_a_preset_cannot_take_on_its_field(admin_client, overrides, field, words):
    response = admin_client.post(reverse(ADD), target_data(**overrides))
    errors = form_errors(response)
    assert list(errors) == [field], errors
    [message] = errors[field]
    for word in words:
        assert word in message, message
    assert not Target.objects.exists()


def test_the_refusal_speaks_chinese_to_a_chinese_admin(admin_client):
    data = target_data(provider="deepseek", url="https://api.deepseek.com/chat/completions", api_key_env="")
    response = admin_client.post(reverse(ADD), data, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    [message] = form_errors(response)["api_key_env"]
    assert "DeepSeek" in message and "DEEPSEEK_API_KEY" in message
    assert "needs a key" not in message
