"""Keys are read from the named environment variable at call time, sent in
the style's own header, and never appear in what the engine reports."""

import hashlib
import json
import uuid

import pytest

from tests.support import mock_log

SECRET = "sk-latency-test-0123456789abcdef"
EXPECTED_HEADER = {
    "openai": "authorization",
    "responses": "authorization",
    "anthropic": "x-api-key",
    "gemini": "x-goog-api-key",
}


@pytest.mark.parametrize("style", ["openai", "responses", "anthropic", "gemini"])
def test_key_is_sent_in_the_styles_header(style, server, probe_url, measure, monkeypatch):
    monkeypatch.setenv("ENGINE_TEST_API_KEY", SECRET)
    rid = uuid.uuid4().hex
    m = measure(
        probe_url(server, style), style, server, api_key_env="ENGINE_TEST_API_KEY", headers={"x-mock-request-id": rid}
    )
    assert m.outcome == "ok", m.error
    credential = mock_log(server, rid)["credential"]
    assert credential["header"] == EXPECTED_HEADER[style]
    assert credential["sha256"] == hashlib.sha256(SECRET.encode()).hexdigest()
    if style == "anthropic":
        assert credential["anthropic_version"]


def test_key_is_read_at_call_time_not_stored_in_the_spec(mockllm, probe_url, measure, monkeypatch):
    from probes.engine import ProbeSpec

    spec = ProbeSpec(url=probe_url(mockllm), model="m", api_key_env="ENGINE_TEST_API_KEY")
    assert SECRET not in json.dumps(spec.to_dict())
    monkeypatch.setenv("ENGINE_TEST_API_KEY", "rotated-" + SECRET)
    rid = uuid.uuid4().hex
    measure(probe_url(mockllm), api_key_env="ENGINE_TEST_API_KEY", headers={"x-mock-request-id": rid})
    assert mock_log(mockllm, rid)["credential"]["sha256"] == hashlib.sha256(("rotated-" + SECRET).encode()).hexdigest()


def test_errors_never_contain_the_key(mockllm, probe_url, measure, monkeypatch):
    monkeypatch.setenv("ENGINE_TEST_API_KEY", SECRET)
    # A header referring to the key by ${VAR}, and a failure whose message could echo it.
    m = measure(
        probe_url(mockllm, "openai", fault=500) + f"&key={SECRET}",
        api_key_env="ENGINE_TEST_API_KEY",
        headers={"x-extra-auth": "${ENGINE_TEST_API_KEY}"},
    )
    assert m.outcome == "http_error"
    assert SECRET not in json.dumps(m.to_dict())


def test_missing_key_variable_is_named_in_the_error(mockllm, probe_url, measure, monkeypatch):
    monkeypatch.delenv("ENGINE_TEST_UNSET_API_KEY", raising=False)
    m = measure(probe_url(mockllm, "openai", fault=500), api_key_env="ENGINE_TEST_UNSET_API_KEY")
    assert "ENGINE_TEST_UNSET_API_KEY is not set" in m.error
