"""A worker reads a target's key variable and ${VAR} headers only from names its LATENCY_PROVIDER_ENV allows
(NAME, PREFIX* or *SUFFIX; unset, names ending in _API_KEY or _TOKEN). Any other name is a config_error that
names the variable and says how to allow it, in the same words whether the variable is set or not; an allowed
one reaches the provider."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from probes.engine import Engine, WorkerEnv
from probes.engine.envpolicy import Allowlist, parse_allowlist
from tests.support import mock_log

SECRET = "sk-allow-test-Ab3xYz9Qr7kLm2Np8Vw4sT6"


def sent_credential(mockllm, probe_url, measure, **fields) -> str:
    """The SHA-256 of the key the mock server received (the call must succeed)."""
    rid = uuid.uuid4().hex
    headers = {"x-mock-request-id": rid, **fields.pop("headers", {})}
    m = measure(probe_url(mockllm), headers=headers, **fields)
    assert m.outcome == "ok", m.error
    return mock_log(mockllm, rid)["credential"]["sha256"]


def refusal(mockllm, probe_url, measure, **fields) -> str:
    m = measure(probe_url(mockllm), **fields)
    assert m.outcome == "config_error", (m.outcome, m.error)
    return m.error


@pytest.mark.parametrize("name", ["ACME_API_KEY", "GATEWAY_TOKEN"])
def test_by_default_names_ending_in_api_key_or_token_are_read(mockllm, probe_url, measure, monkeypatch, name):
    monkeypatch.delenv("LATENCY_PROVIDER_ENV", raising=False)
    monkeypatch.setenv(name, SECRET)
    assert sent_credential(mockllm, probe_url, measure, api_key_env=name) == hashlib.sha256(SECRET.encode()).hexdigest()


@pytest.mark.parametrize("where", ["api_key_env", "headers"])
def test_a_name_outside_the_allowlist_is_refused_alike_set_or_not(mockllm, probe_url, measure, monkeypatch, where):
    monkeypatch.delenv("LATENCY_PROVIDER_ENV", raising=False)
    name = "ACME_GATEWAY_SECRET"
    fields = {"api_key_env": name} if where == "api_key_env" else {"headers": {"Authorization": f"Bearer ${{{name}}}"}}

    monkeypatch.delenv(name, raising=False)
    unset = refusal(mockllm, probe_url, measure, **fields)
    monkeypatch.setenv(name, SECRET)
    is_set = refusal(mockllm, probe_url, measure, **fields)

    assert unset == is_set
    assert is_set.startswith(f"{where}: ") and name in is_set and "LATENCY_PROVIDER_ENV" in is_set
    assert "not set" not in is_set and SECRET not in is_set


def test_a_listed_prefix_is_read_and_replaces_the_default(mockllm, probe_url, measure, monkeypatch):
    monkeypatch.setenv("LATENCY_PROVIDER_ENV", "ACME_*, OPENAI_API_KEY")
    monkeypatch.setenv("ACME_GATEWAY_SECRET", SECRET)
    monkeypatch.setenv("OTHER_API_KEY", SECRET)

    sha = sent_credential(mockllm, probe_url, measure, api_key_env="ACME_GATEWAY_SECRET")
    assert sha == hashlib.sha256(SECRET.encode()).hexdigest()
    assert "OTHER_API_KEY" in refusal(mockllm, probe_url, measure, api_key_env="OTHER_API_KEY")


def test_the_allowlist_is_read_once_when_the_engine_is_made(monkeypatch):
    monkeypatch.setenv("LATENCY_PROVIDER_ENV", "ACME_*")
    engine = Engine()
    monkeypatch.setenv("LATENCY_PROVIDER_ENV", "OTHER_*")
    assert engine.worker_env.allowed == Allowlist(("ACME_*",))
    assert WorkerEnv.from_env({}).allowed == Allowlist(("*_API_KEY", "*_TOKEN"))


@pytest.mark.parametrize(
    "text, words",
    [
        ("OPENAI_API_KEY,LATENCY_REGION_KEY_*", "site's own variables"),
        ("DATABASE_URL", "site's own variables"),
        ("*_FILE", "site's own variables"),
        ("CELERY_*", "site's own variables"),
        ("*", "not a variable name"),
        ("ACME-*", "not a variable name"),
        ("A*B", "not a variable name"),
    ],
)
def test_a_list_naming_site_variables_or_malformed_is_refused_naming_the_setting(text, words):
    with pytest.raises(ValueError) as info:
        parse_allowlist(text)
    assert str(info.value).startswith("LATENCY_PROVIDER_ENV: ") and words in str(info.value)
