"""`manage.py probe URL --provider KEY`: the preset's style unless --style says otherwise, a --style the preset
does not speak refused with both named (exit status 2), an unknown preset refused by its choices."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the repository


def probe(*args):
    return subprocess.run(
        [sys.executable, "manage.py", "probe", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )


@pytest.mark.parametrize("provider", ["mistral", "groq", "azure-openai"])
def test_an_openai_compatible_preset_measures_the_mock_ok(mockllm, probe_url, provider):
    out = probe(probe_url(mockllm, "openai", tokens=5, gap_ms=2), "--provider", provider, "--model", "m", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["outcome"] == "ok" and data["output_tokens"] == 5


def test_the_presets_style_is_used_when_no_style_is_given(mockllm, probe_url):
    # An Anthropic stream read as chat completions would have no token: ok with tokens means the anthropic style.
    url = probe_url(mockllm, "anthropic", tokens=4, gap_ms=2)
    out = probe(url, "--provider", "anthropic", "--model", "m", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["outcome"] == "ok" and data["output_tokens"] == 4 and data["ttft_ms"] is not None


def test_a_style_the_preset_does_not_speak_is_refused_naming_both():
    out = probe("http://127.0.0.1:1/v1/messages", "--provider", "anthropic", "--style", "openai", "--model", "m")
    assert out.returncode == 2
    assert "--style openai" in out.stderr and "--provider anthropic" in out.stderr
    assert "anthropic style" in out.stderr


def test_an_unknown_preset_is_refused_by_its_choices():
    out = probe("http://127.0.0.1:1/v1/chat/completions", "--provider", "acme", "--model", "m")
    assert out.returncode == 2
    assert "invalid choice: 'acme'" in out.stderr and "azure-openai" in out.stderr
