"""Why the presets exist: a custom target (provider "") sends the plain OpenAI request, which Mistral refuses
with 422 for stream_options and Azure with 401 for a bearer key; both are http_error with the provider's
message, read from its own error shapes. Azure's deployment path also needs its api-version."""

import pytest

from tests.providers.conftest import KEY, KEY_ENV


def test_mistral_refuses_stream_options_with_its_422(mockllm, preset_url, measure, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    m = measure(preset_url(mockllm, "mistral"), provider="", api_key_env=KEY_ENV)
    assert (m.outcome, m.http_status) == ("http_error", 422)
    assert m.error_type == "invalid_request_error"
    assert "stream_options: Extra inputs are not permitted" in m.error
    assert m.ttft_ms is None


def test_azure_refuses_a_key_sent_as_a_bearer_token(mockllm, preset_url, measure, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    m = measure(preset_url(mockllm, "azure-openai"), provider="", api_key_env=KEY_ENV)
    assert (m.outcome, m.http_status, m.error_type) == ("http_error", 401, "401")
    assert "Access denied due to invalid subscription key" in m.error
    assert KEY not in str(m.to_dict())


@pytest.mark.parametrize(
    ("version", "status", "message"),
    [(None, 404, "Resource not found"), ("yesterday", 400, "API version not supported")],
)
def test_azures_deployment_path_needs_a_valid_api_version(
    version, status, message, mockllm, preset_url, measure_preset
):
    url = preset_url(mockllm, "azure-openai").replace("api-version=2024-10-21", f"api-version={version}")
    if version is None:
        url = url.replace("?api-version=None&", "?").replace("?api-version=None", "")
    m = measure_preset(url, "azure-openai")
    assert (m.outcome, m.http_status) == ("http_error", status)
    assert message in m.error


def test_azures_v1_path_needs_no_api_version(mockllm, measure_preset):
    url = mockllm.base_url + "/openai/v1/chat/completions?tokens=3"
    m = measure_preset(url, "azure-openai")
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (3, False)
