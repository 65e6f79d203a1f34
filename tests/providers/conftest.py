"""The provider presets against the mock server's scenario of each: the URL, the key and what to expect."""

from __future__ import annotations

import pytest

from probes.engine.providers import PROVIDER_LIST

# The presets that speak chat completions, each with a mock scenario of its own dialect.
CHAT_PRESETS = [p.key for p in PROVIDER_LIST if p.style == "openai" and p.key != "openai"]
KEY = "sk-preset-test-0123456789abcdef"
KEY_ENV = "PRESET_TEST_API_KEY"
AZURE_PATH = "/openai/deployments/mock-deployment/chat/completions"


@pytest.fixture
def preset_url():
    """The mock's URL for a preset, shaped as the preset's template: Azure's deployment path with its
    api-version (the path alone chooses Azure's dialect), the `provider` knob for the others."""

    def build(server, provider: str, **knobs) -> str:
        base = server.base_url.replace("127.0.0.1", "localhost")
        if provider == "azure-openai":
            query = {"api-version": "2024-10-21", **knobs}
            path = AZURE_PATH
        else:
            query = {"provider": provider, **knobs}
            path = "/v1/chat/completions"
        return base + path + "?" + "&".join(f"{k}={v}" for k, v in query.items())

    return build


@pytest.fixture
def measure_preset(measure, monkeypatch):
    """The engine's measurement of one call to a preset's scenario, with the preset's key in the environment."""
    monkeypatch.setenv(KEY_ENV, KEY)

    def run(url: str, provider: str, server=None, **overrides):
        return measure(url, "openai", server, provider=provider, api_key_env=KEY_ENV, **overrides)

    return run
