"""LATENCY_METRICS_TOKEN is a secret: one too short to be one stops start-up with a message naming the variable, and
the settings keep only its SHA-256, never the token itself (a settings dump, a debug page, cannot show it)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = (
    "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'latency.settings'); django.setup(); "
    "from django.conf import settings; "
    "print(settings.LATENCY_METRICS_TOKEN_SHA256); "
    "token = os.environ['LATENCY_METRICS_TOKEN']; "
    "print(any(token in repr(getattr(settings, n)) for n in dir(settings) if n.isupper()))"
)


def run(token: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LATENCY_METRICS_TOKEN": token}
    return subprocess.run(
        [sys.executable, "-c", SNIPPET], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_short_token_stops_start_up_naming_the_variable():
    result = run("too-short")
    assert result.returncode != 0
    assert "LATENCY_METRICS_TOKEN is too short" in result.stderr


def test_the_settings_keep_the_tokens_digest_and_not_the_token():
    token = "a-long-enough-metrics-token-0123456789"
    result = run(token)
    assert result.returncode == 0, result.stderr
    digest, leaked = result.stdout.split()
    assert digest == hashlib.sha256(token.encode()).hexdigest()
    assert leaked == "False"
