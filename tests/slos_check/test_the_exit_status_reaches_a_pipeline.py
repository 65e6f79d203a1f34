"""`manage.py slo_check` run as a pipeline runs it, a process of its own against the (test) database: exit status
1 while an objective burns faster than 1x, 0 when those checked do not, 2 for a bad window or name."""

from __future__ import annotations

import os
import subprocess
import sys

from django.db import connection

from tests.conftest import _database_url
from tests.support import ROOT


def slo_check(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": _database_url(dict(connection.settings_dict))}
    return subprocess.run(
        [sys.executable, "manage.py", "slo_check", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_processes_exit_status_is_the_gates(burning):
    now = burning.now.isoformat()
    failing = slo_check("--now", now)
    assert failing.returncode == 1, failing.stderr
    assert "chat p99: burn 1h 10.00x" in failing.stdout
    passing = slo_check("--slo", "chat p50", "--now", now)
    assert passing.returncode == 0, passing.stderr
    assert passing.stdout.startswith("chat p50: burn 1h 0.20x")

    bad_window = slo_check("--window", "2h")
    assert bad_window.returncode == 2
    assert "invalid choice: '2h'" in bad_window.stderr
    unknown = slo_check("--slo", "nope")
    assert unknown.returncode == 2
    assert "no objective named 'nope'" in unknown.stderr
