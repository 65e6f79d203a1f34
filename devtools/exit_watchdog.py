"""A pytest plugin: once the session's verdict is in, the process exits within a grace period.

A thread that will not stop (a library's non-daemon thread, an executor worker blocked on a socket, an
atexit handler waiting on a lock) holds a finished pytest process open for ever: a CI run once printed
"955 passed" and then sat until its 90-minute limit, and the run counted as failed. After the session
ends, a daemon thread waits out the grace period (LATENCY_TEST_EXIT_GRACE_S, default 120 s); if the
process is still there it prints every thread's stack, so whatever held it is named and gets fixed,
and ends the process with the session's own exit status. A process that exits normally never hears
from it (daemon threads stop with the process).

Loaded by tests/conftest.py (`pytest_plugins`).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading

import pytest

DEFAULT_GRACE_S = 120.0


def grace_seconds() -> float:
    return float(os.environ.get("LATENCY_TEST_EXIT_GRACE_S") or DEFAULT_GRACE_S)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    status = int(exitstatus)
    grace = grace_seconds()

    def watchdog() -> None:
        # A deadline, not a wait for an event: only the process ending stops this thread earlier.
        threading.Event().wait(grace)
        sys.stdout.flush()
        sys.stderr.write(
            f"\n[exit watchdog] the process had not exited {grace:g} s after the session ended; "
            f"ending it with the session's exit status {status}. Threads still running:\n"
        )
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        os._exit(status)

    threading.Thread(target=watchdog, name="exit-watchdog", daemon=True).start()
