"""A configuration that HTTP cannot carry (a CA file missing on the worker or
not PEM, a header or key with a character a header cannot hold, a host name
DNS cannot encode, a Content-Length of our own) gives a measurement with
outcome config_error that names the field and never its value: the engine,
the region worker's path and `probe --json` never raise or print a
traceback for it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probes.engine import Engine, ProbeSpec

ROOT = Path(__file__).resolve().parents[2]  # the repository
KEY_VAR = "CONFIG_TEST_API_KEY"
PATH = "/v1/chat/completions"


def not_pem() -> str:
    # Inside the session's LATENCY_CA_DIR (tests/conftest.py): not PEM, rather than outside the directory.
    path = Path(os.environ["LATENCY_CA_DIR"]) / f"latency-not-pem-{os.getpid()}.pem"
    path.write_text("this is not a certificate\n")
    return str(path)


# (case, field named in the error, spec overrides, host to put in the URL or None, environment, secret value)
CASES = [
    ("ca_bundle missing, plain http", "ca_bundle", {"ca_bundle": "/nonexistent/latency-ca.pem"}, None, {}),
    ("ca_bundle not PEM", "ca_bundle", {"ca_bundle": "NOT_PEM"}, None, {}),
    ("header with a non-ASCII value", "headers", {"headers": {"X-Title": "Caf\u00e9 \u201cprod\u201d"}}, None, {}),
    ("header with a control character", "headers", {"headers": {"X-Trace": "abc\x07def"}}, None, {}),
    ("extra Content-Length", "headers", {"headers": {"Content-Length": "5"}}, None, {}),
    ("extra Host", "headers", {"headers": {"Host": "example.com"}}, None, {}),
    (
        "key with a control character",
        "api_key_env",
        {"api_key_env": KEY_VAR},
        None,
        {KEY_VAR: "sk-config-test-0123\x1b456789abcdef"},
    ),
    (
        "key with a non-ASCII character",
        "api_key_env",
        {"api_key_env": KEY_VAR},
        None,
        {KEY_VAR: "sk-config-test-0123\u201d456789abcdef"},
    ),
    ("host with an empty label", "url", {}, "a..b", {}),
    ("host label over 63 characters", "url", {}, "a" * 64 + ".example", {}),
    ("host with a broken A-label", "url", {}, "xn--zz-", {}),
    ("host with a broken punycode label", "url", {}, "xn--zz.example", {}),
    ("host with a soft hyphen", "url", {}, "ex\u00adample.com", {}),
]
IDS = [case[0] for case in CASES]


def make_spec(server, overrides: dict, host: str | None) -> ProbeSpec:
    base = server.base_url if host is None else f"http://{host}:{server.port}"
    args = {"url": base + PATH, "model": "mock-model", "timeout_s": 10.0, **overrides}
    if args.get("ca_bundle") == "NOT_PEM":
        args["ca_bundle"] = not_pem()
    return ProbeSpec(**args)


def secret_values(overrides: dict, env: dict) -> list[str]:
    """What must never appear in the message: header values and keys."""
    values = [v for v in env.values()]
    values += [v for v in overrides.get("headers", {}).values() if len(v) > 2]
    return values


def assert_config_error(m, field: str, overrides: dict, env: dict, host: str | None) -> None:
    assert m.outcome == "config_error", (m.outcome, m.error)
    assert m.error.startswith(field + ":"), m.error
    for value in secret_values(overrides, env):
        assert value not in m.error
    if host is not None:
        assert host not in m.error
    assert m.http_status is None and m.ttfb_ms is None
    assert m.started_at is not None
    json.dumps(m.to_dict())  # storable as it is


@pytest.mark.parametrize("case, field, overrides, host, env", CASES, ids=IDS)
def test_the_engine_returns_a_config_error_instead_of_raising(mockllm, monkeypatch, case, field, overrides, host, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    spec = make_spec(mockllm, overrides, host)

    async def go():
        engine = Engine()
        try:
            return await engine.measure(spec)
        finally:
            await engine.aclose()

    assert_config_error(asyncio.run(go()), field, overrides, env, host)


@pytest.mark.parametrize("case, field, overrides, host, env", CASES, ids=IDS)
def test_the_region_worker_stores_a_config_error_instead_of_raising(
    mockllm, monkeypatch, case, field, overrides, host, env
):
    from probes.runtime import run_probe

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # Twice through the worker's long-lived engine: a bad CA file is not
    # cached as if it were good, nor does it break the next run.
    for _ in range(2):
        assert_config_error(run_probe(make_spec(mockllm, overrides, host)), field, overrides, env, host)
    ok = run_probe(ProbeSpec(url=mockllm.base_url + PATH, model="mock-model", timeout_s=10.0))
    assert ok.outcome == "ok", ok.error


def test_a_fixed_ca_file_is_used_at_the_next_run(mockllm_tls, worker_ca_dir):
    from probes.runtime import run_probe

    path = worker_ca_dir / f"fixed-later-{os.getpid()}.pem"
    spec = ProbeSpec(url=mockllm_tls.base_url + PATH, model="mock-model", timeout_s=10.0, ca_bundle=path.name)
    assert run_probe(spec).outcome == "config_error"
    path.write_bytes(Path(mockllm_tls.ca_pem_path).read_bytes())
    m = run_probe(spec)
    assert m.outcome == "ok", m.error


def probe_json(*args, env=None):
    return subprocess.run(
        [sys.executable, "manage.py", "probe", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    "field, args, env",
    [
        ("headers", ["--header", "X-Title: Caf\u00e9"], {}),
        ("headers", ["--header", "Content-Length: 5"], {}),
        ("api_key_env", ["--api-key-env", KEY_VAR], {KEY_VAR: "sk-config-test-0123\x1b456789abcdef"}),
        ("api_key_env", ["--api-key-env", KEY_VAR], {KEY_VAR: "sk-config-test-0123\u201d456789abcdef"}),
        ("url", ["HOST:a..b"], {}),
        ("url", ["HOST:" + "a" * 64 + ".example"], {}),
        ("url", ["HOST:xn--zz-"], {}),
        ("url", ["HOST:ex\u00adample.com"], {}),
    ],
    ids=[
        "header-non-ascii",
        "content-length",
        "key-control",
        "key-non-ascii",
        "empty-label",
        "long-label",
        "broken-a-label",
        "soft-hyphen",
    ],
)
def test_probe_json_prints_one_config_error_object_and_exits_1(mockllm, field, args, env):
    if args[0].startswith("HOST:"):
        url, args = f"http://{args[0][5:]}:{mockllm.port}{PATH}", []
    else:
        url = mockllm.base_url + PATH
    out = probe_json(url, "--model", "m", *args, env=env)
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    data = json.loads(out.stdout)  # exactly one JSON object: anything else fails to parse
    assert data["outcome"] == "config_error"
    assert data["error"].startswith(field + ":")
    for value in env.values():
        assert value not in out.stdout + out.stderr
