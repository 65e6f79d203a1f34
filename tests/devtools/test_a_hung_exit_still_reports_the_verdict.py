"""A pytest process held open after its session by a thread that never stops ends anyway, with the
session's exit status and the stuck thread's stack printed (devtools.exit_watchdog)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import ROOT

STUCK = """
import threading

def never_stop():
    threading.Event().wait()


def test_leaves_a_thread_that_never_stops():
    # Not a daemon: interpreter exit waits for it.
    threading.Thread(target=never_stop).start()
"""


@pytest.mark.parametrize(("extra", "status"), [("", 0), ("\ndef test_fails():\n    assert 1 == 2\n", 1)])
def test_a_thread_that_never_stops_cannot_hold_the_run_open(tmp_path, extra, status):
    (tmp_path / "test_stuck.py").write_text(STUCK + extra)
    env = {**os.environ, "LATENCY_TEST_EXIT_GRACE_S": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "devtools.exit_watchdog",
            "-p",
            "no:cacheprovider",
            "-q",
            "-c",
            os.devnull,
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == status, done.stdout + done.stderr
    assert "[exit watchdog]" in done.stderr
    # The stuck thread's stack names where it waits.
    assert "in never_stop" in done.stderr, done.stderr
