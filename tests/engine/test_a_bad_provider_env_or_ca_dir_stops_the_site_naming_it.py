"""The central site reads LATENCY_PROVIDER_ENV and LATENCY_CA_DIR too (`manage.py probe` runs the engine under its
rules): a list naming the site's own variables, a malformed one, or a CA directory that is not one stops start-up
with one message naming the variable, as every other setting does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the repository


@pytest.mark.parametrize(
    "variable, value, words",
    [
        ("LATENCY_PROVIDER_ENV", "OPENAI_API_KEY,DATABASE_URL", "LATENCY_PROVIDER_ENV: DATABASE_URL names the site's"),
        ("LATENCY_PROVIDER_ENV", "ACME_*,*", "LATENCY_PROVIDER_ENV: '*' is not a variable name"),
        ("LATENCY_CA_DIR", "/nonexistent/latency-cas", "LATENCY_CA_DIR=/nonexistent/latency-cas is not a directory"),
        ("LATENCY_CA_DIR", "cas", "LATENCY_CA_DIR=cas is not an absolute path"),
    ],
    ids=["site-variable", "malformed", "missing-dir", "relative-dir"],
)
def test_a_bad_value_stops_start_up_naming_it(variable, value, words):
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, variable: value},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and words in result.stderr
