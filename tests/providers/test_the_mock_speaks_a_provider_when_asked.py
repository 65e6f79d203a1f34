"""The mock's provider knob: by query or x-mock-provider header, "none" and the chat presets' keys only;
its dialects keep the mock's echo_key fault working with Azure's api-key header."""

import httpx
import pytest

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def test_the_header_chooses_the_dialect(mockllm):
    response = httpx.post(
        mockllm.base_url + "/v1/chat/completions?tokens=2", json=BODY, headers={"x-mock-provider": "groq"}
    )
    assert response.status_code == 200 and '"x_groq"' in response.text


@pytest.mark.parametrize("value", ["bogus", "anthropic", "openai-responses"])
def test_an_unknown_or_non_chat_provider_is_refused(mockllm, value):
    response = httpx.post(mockllm.base_url + f"/v1/chat/completions?provider={value}", json=BODY)
    assert response.status_code == 400
    assert response.json()["error"]["knob"] == "provider"


def test_echo_key_finds_the_key_in_azures_api_key_header(mockllm):
    url = mockllm.base_url + "/openai/deployments/d/chat/completions?api-version=2024-10-21&fault=500&echo_key=raw"
    response = httpx.post(url, json=BODY, headers={"api-key": "azure-echo-me"})
    assert response.status_code == 500 and "azure-echo-me" in response.json()["error"]["message"]
