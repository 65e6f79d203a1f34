"""No run of 8 characters of a key ever reaches a stored error, a log line or
the `probe` command's output: whatever the provider echoes (in a JSON error,
a text body, a non-JSON stream line, a stream error event; raw, percent-
encoded, JSON-escaped or quoted as bytes), however the key is malformed
(a trailing newline from a secret file, a Windows CRLF, a typographic quote
pasted from a document, a control character), whichever header carries it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from probes.engine import Engine, ProbeSpec

ROOT = Path(__file__).resolve().parents[2]  # the repository
WINDOW = 8
VAR = "LEAK_TEST_API_KEY"
# Base64-ish, with "+", "/" and "=" every few characters: percent-encoding and
# JSON escaping change it, so each echoed form is a different string.
BODY = "sk-proj-Ab3+x/Yz9=Qr7kLm2/Np8+Vw4sT6=Hj1cDe5/Gf0+Uo9iRt3yWq"

# Values as they sit in a worker's environment. Trimmed ones are sent (and
# echoed back by the mock); the others cannot be sent and never leave.
SENDABLE = {
    "well formed": BODY,
    "trailing newline": BODY + "\n",
    "windows line end": BODY + "\r\n",
    "surrounding spaces": "  " + BODY + " \t",
}
UNSENDABLE = {
    "typographic quote": BODY[:20] + "\u201d" + BODY[20:],
    "control character": BODY[:20] + "\x1b" + BODY[20:],
    "newline inside": BODY[:20] + "\n" + BODY[20:],
    "delete character": BODY[:20] + "\x7f" + BODY[20:] + "\n",
}

STYLE_PATHS = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/mock-model:streamGenerateContent",
}
# How the key travels: each style's own header, or a `Bearer ${VAR}` header.
CARRIERS = ["openai", "anthropic", "gemini", "bearer header"]
# Where the mock echoes the key it received (see devtools/mockllm/knobs.py echo_key).
PLACES = {
    "json error body": {"fault": "500"},
    "text error body": {"fault": "500", "error_format": "text"},
    "rate limit body": {"fault": "429"},
    "non-JSON stream line": {"fault": "malformed"},
    "stream error event": {"fault": "error_mid"},
}
FORMS = ["raw", "percent", "json", "repr"]


def written_forms(value: str) -> set[str]:
    """A key as it could be written in a message."""
    forms = set()
    for s in (value, value.strip()):
        forms |= {
            s,
            quote(s, safe=""),
            json.dumps(s)[1:-1],
            json.dumps(s)[1:-1].replace("/", "\\/"),
            repr(s)[1:-1],
            repr(s.encode("utf-8"))[2:-1],
        }
    return forms


def leaks(text: str, value: str) -> list[str]:
    """The 8-character runs of the key found in text."""
    found = []
    for form in written_forms(value):
        for i in range(len(form) - WINDOW + 1):
            if form[i : i + WINDOW] in text:
                found.append(form[i : i + WINDOW])
    return found


def spec_for(server, carrier: str, knobs: dict[str, str], **extra) -> ProbeSpec:
    style = "openai" if carrier == "bearer header" else carrier
    query = "&".join(f"{k}={v}" for k, v in knobs.items())
    url = server.base_url.replace("127.0.0.1", "localhost") + STYLE_PATHS[style] + "?" + query
    auth = (
        {"headers": {"Authorization": "Bearer ${" + VAR + "}"}} if carrier == "bearer header" else {"api_key_env": VAR}
    )
    return ProbeSpec(url=url, style=style, model="mock-model", timeout_s=10.0, **auth, **extra)


def run(spec: ProbeSpec):
    async def go():
        engine = Engine()
        try:
            return await engine.measure(spec)
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.fixture
def all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def assert_nothing_leaks(m, value: str, caplog) -> None:
    assert m.error, "a failed call must say what failed"
    assert not leaks(m.error, value), m.error
    assert not leaks(m.error_type or "", value), m.error_type
    assert not leaks(json.dumps(m.to_dict()), value)
    assert not leaks(caplog.text, value), caplog.text[-2000:]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("carrier", CARRIERS)
def test_an_echoed_key_never_reaches_the_result(mockllm, monkeypatch, all_logs, carrier, place, form):
    # Each combination gets one of the sendable malformations in turn.
    name = list(SENDABLE)[(CARRIERS.index(carrier) + FORMS.index(form)) % len(SENDABLE)]
    value = SENDABLE[name]
    monkeypatch.setenv(VAR, value)
    m = run(spec_for(mockllm, carrier, {**PLACES[place], "echo_key": form}))
    assert_nothing_leaks(m, value, all_logs)
    # The trimmed key was sent, echoed, and the rest of the message kept.
    assert m.outcome in ("http_error", "rate_limited", "overloaded", "protocol_error", "upstream_error"), (
        m.outcome,
        m.error,
    )
    assert "Incorrect API key provided" in m.error


def test_a_long_key_cut_by_the_message_limit_is_still_redacted(mockllm, monkeypatch, all_logs):
    # The cut once came first: 45 of 50 characters of an echoed key survived.
    value = (BODY * 3)[:150] + "\n"
    monkeypatch.setenv(VAR, value)
    for knobs in ({"fault": "500", "error_format": "text"}, {"fault": "malformed"}):
        m = run(spec_for(mockllm, "openai", {**knobs, "echo_key": "raw"}))
        assert_nothing_leaks(m, value, all_logs)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("name", list(UNSENDABLE))
def test_a_key_http_cannot_carry_is_a_config_error_that_names_the_variable(
    mockllm, monkeypatch, all_logs, carrier, name
):
    value = UNSENDABLE[name]
    monkeypatch.setenv(VAR, value)
    m = run(spec_for(mockllm, carrier, {}))
    assert m.outcome == "config_error"
    assert VAR in m.error
    assert_nothing_leaks(m, value, all_logs)


def test_the_region_worker_path_logs_no_key(mockllm, monkeypatch, all_logs):
    from probes.runtime import run_probe

    for value in (UNSENDABLE["typographic quote"], SENDABLE["trailing newline"]):
        monkeypatch.setenv(VAR, value)
        m = run_probe(spec_for(mockllm, "anthropic", {"fault": "500", "echo_key": "raw"}))
        assert m.outcome in ("config_error", "http_error")
        assert_nothing_leaks(m, value, all_logs)


def test_an_unset_variable_in_a_header_is_named(mockllm, monkeypatch):
    monkeypatch.delenv("LEAK_TEST_UNSET_TOKEN", raising=False)
    url = mockllm.base_url + STYLE_PATHS["openai"] + "?fault=500"
    spec = ProbeSpec(url=url, model="m", headers={"Authorization": "Bearer ${LEAK_TEST_UNSET_TOKEN}"})
    m = run(spec)
    assert m.outcome == "http_error", m.error
    assert "LEAK_TEST_UNSET_TOKEN" in m.error and "Authorization" in m.error and "not set" in m.error


def probe(*args, value: str):
    return subprocess.run(
        [sys.executable, "manage.py", "probe", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, VAR: value},
    )


@pytest.mark.parametrize(
    "value, style, knobs, auth",
    [
        (SENDABLE["trailing newline"], "openai", "fault=500&echo_key=raw", "env"),
        (SENDABLE["windows line end"], "anthropic", "fault=500&error_format=text&echo_key=percent", "env"),
        (SENDABLE["trailing newline"], "gemini", "fault=malformed&echo_key=json", "env"),
        (SENDABLE["windows line end"], "openai", "fault=error_mid&echo_key=repr", "header"),
        (UNSENDABLE["typographic quote"], "openai", "", "header"),
        (UNSENDABLE["control character"], "anthropic", "", "env"),
    ],
    ids=["json-error", "text-body", "sse-line", "sse-error-header", "quote-header", "control-env"],
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_the_probe_command_never_prints_a_key(mockllm, value, style, knobs, auth, as_json):
    url = mockllm.base_url + STYLE_PATHS[style] + ("?" + knobs if knobs else "")
    args = [url, "--style", style, "--model", "m"]
    args += ["--api-key-env", VAR] if auth == "env" else ["--header", "Authorization: Bearer ${" + VAR + "}"]
    out = probe(*args, *(["--json"] if as_json else []), value=value)
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert not leaks(out.stdout + out.stderr, value), out.stdout + out.stderr
    if as_json:
        assert json.loads(out.stdout)["outcome"] in ("http_error", "protocol_error", "upstream_error", "config_error")
