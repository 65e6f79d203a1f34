"""The official openai SDK's AzureOpenAI client streams a chat completion from the mock's Azure scenario:
deployment path, api-version and api-key as the SDK sends them, and a stream (filter chunk first) it reads."""

import hashlib
import uuid

import openai

from tests.support import mock_log

KEY = "azure-sdk-test-key-0123456789"


def test_azure_openai_client_streams_from_the_azure_scenario(mockllm):
    rid = uuid.uuid4().hex
    client = openai.AzureOpenAI(
        azure_endpoint=mockllm.base_url,
        azure_deployment="mock-deployment",
        api_version="2024-10-21",
        api_key=KEY,
        max_retries=0,
        default_headers={"x-mock-request-id": rid},
    )
    with client:
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Say hello"}],
            stream=True,
            stream_options={"include_usage": True},
            extra_query={"tokens": 5},
        )
        chunks = list(stream)
    assert chunks[0].choices == [] and chunks[0].model_extra["prompt_filter_results"]
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "Hello from the mock server"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 5
    log = mock_log(mockllm, rid)
    assert log["path"] == "/openai/deployments/mock-deployment/chat/completions"
    assert (log["provider"], log["model"]) == ("azure-openai", "mock-deployment")
    assert log["credential"] == {
        "header": "api-key",
        "sha256": hashlib.sha256(KEY.encode()).hexdigest(),
        "anthropic_version": "",
    }


def test_azure_openai_client_sees_azures_401_without_a_key(mockllm):
    client = openai.AzureOpenAI(
        azure_endpoint=mockllm.base_url,
        azure_deployment="mock-deployment",
        api_version="2024-10-21",
        azure_ad_token="not-a-key",  # a bearer token: not what an API key deployment takes
        max_retries=0,
    )
    with client:
        try:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        except openai.AuthenticationError as exc:
            assert exc.status_code == 401 and "Access denied" in str(exc)
        else:
            raise AssertionError("the Azure scenario accepted a bearer token")
