"""`manage.py probe`: one call, a waterfall or exactly one JSON object, and
an exit status that says whether it worked."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probes.engine.result import MEASUREMENT_FIELDS

ROOT = Path(__file__).resolve().parents[2]  # the repository


def probe(*args, env=None):
    return subprocess.run(
        [sys.executable, "manage.py", "probe", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_json_output_is_exactly_one_object_with_every_field(mockllm, probe_url):
    out = probe(probe_url(mockllm, "openai", tokens=5, gap_ms=2), "--style", "openai", "--model", "m", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == set(MEASUREMENT_FIELDS)
    assert data["outcome"] == "ok" and data["output_tokens"] == 5


def test_waterfall_shows_phases_and_tls(mockllm_tls, probe_url):
    out = probe(
        probe_url(mockllm_tls, "anthropic"),
        "--style",
        "anthropic",
        "--model",
        "m",
        "--ca-bundle",
        mockllm_tls.ca_pem_path,
    )
    assert out.returncode == 0, out.stderr
    for label in ("DNS", "TCP connect", "TLS handshake", "first token (TTFT)", "total"):
        assert label in out.stdout


def test_failed_call_exits_with_status_one(mockllm, probe_url):
    out = probe(probe_url(mockllm, "gemini", fault=500), "--style", "gemini", "--model", "m", "--json")
    assert out.returncode == 1
    assert json.loads(out.stdout)["outcome"] == "http_error"


def test_warm_flag_measures_a_reused_connection(mockllm, probe_url):
    out = probe(probe_url(mockllm, "openai"), "--model", "m", "--warm", "--json")
    data = json.loads(out.stdout)
    assert data["connection"] == "warm" and data["connect_ms"] is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["ftp://example.com/x", "--model", "m"], "http:// or https://"),
        (["http://127.0.0.1:1/", "--model", "m", "--header", "no colon"], "Name: value"),
        (["http://127.0.0.1:1/", "--model", "m", "--max-tokens", "0"], "max_tokens"),
        (["http://127.0.0.1:1/", "--model", "m", "--timeout", "-1"], "timeout"),
        (["http://127.0.0.1:1/", "--model", "m", "--api-key-env", "PROBE_TEST_UNSET_API_KEY"], "is not set"),
        (["http://127.0.0.1:1/", "--model", "m", "--ca-bundle", "nonexistent.pem"], "not a readable PEM CA bundle"),
        (["http://127.0.0.1:1/", "--model", "m", "--ca-bundle", "/etc/passwd"], "not a readable PEM CA bundle"),
        (["http://127.0.0.1:1/", "--model", "m", "--api-key-env", "DATABASE_URL"], "one of the site's own variables"),
        (["http://127.0.0.1:1/", "--model", "m", "--api-key-env", "ACME_SECRET"], "LATENCY_PROVIDER_ENV"),
        (["http://127.0.0.1:1/", "--style", "cohere"], "invalid choice"),
        (["http://127.0.0.1:1/", "--style", "openai"], "--model is required"),
    ],
)
def test_bad_arguments_get_a_clear_message_not_a_traceback(args, message):
    out = probe(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_api_key_is_never_printed(mockllm, probe_url):
    secret = "sk-test-very-secret-value-123"
    out = probe(
        probe_url(mockllm, "openai", fault=500),
        "--model",
        "m",
        "--api-key-env",
        "PROBE_TEST_API_KEY",
        "--json",
        env={"PROBE_TEST_API_KEY": secret},
    )
    assert out.returncode == 1
    assert secret not in out.stdout + out.stderr
