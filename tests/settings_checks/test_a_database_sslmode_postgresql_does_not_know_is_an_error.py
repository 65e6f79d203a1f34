"""latency.E003: DATABASE_URL's ?sslmode= must be one PostgreSQL knows (a typo would fail only at the first
query). `manage.py check` in a subprocess, with the URL an operator would write."""

import os
import subprocess
import sys

from tests.support import ROOT


def check(database_url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_an_unknown_sslmode_is_error_e003():
    result = check("postgres://latency:CHANGE-ME@db.example.org:5432/latency?sslmode=required")
    assert result.returncode != 0
    assert "latency.E003" in result.stderr
    assert "CHANGE-ME" not in result.stderr + result.stdout


def test_a_known_sslmode_passes():
    result = check("postgres://latency:CHANGE-ME@db.example.org:5432/latency?sslmode=verify-full")
    assert "latency.E003" not in result.stderr + result.stdout
