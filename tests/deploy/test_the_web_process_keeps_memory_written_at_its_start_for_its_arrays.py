"""The served web process writes LATENCY_WEB_MEMORY_RESERVE_MB once at its start and glibc keeps it (latency.memory),
so a read's first large arrays take memory already faulted in instead of a page fault per 4 KB; from every thread,
since one heap serves them all. Counted in a fresh interpreter (a process's page faults so far are its own
history), with glibc only."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")

# The first request's arrays: 7 MB of counts for the 900 series of the table of every target, written in a thread
# that starts after the start-up as the reads' helper threads do, and the page faults that took.
PROBE = """
import json, resource, sys, threading
from latency import memory  # first, as the site imports it: numpy then takes no huge pages
import numpy as np
reserve = int(sys.argv[1])
kept = memory.keep_freed(reserve)
written = memory.reserve(reserve)
faults = {}
def first_arrays(name):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    counts = np.zeros((900, 996), dtype=np.int64)
    counts += 1
    faults[name] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
first_arrays("main")
helper = threading.Thread(target=first_arrays, args=("helper",))
helper.start()
helper.join()
print(json.dumps({"kept": kept, "written": written, "faults": faults}))
"""


def first_arrays(reserve_mb: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(reserve_mb)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_first_large_array_takes_memory_written_at_the_start_from_any_thread() -> None:
    fresh = first_arrays(0)
    kept = first_arrays(64)
    assert not fresh["kept"] and fresh["written"] == 0
    assert kept["kept"] and kept["written"] == 64 << 20
    pages = 900 * 996 * 8 // 4096
    # Without the reserve every 4 KB page of the array faults at least once.
    assert fresh["faults"]["main"] >= pages
    # With it, hardly any: the heap hands back pages already written, to the helper thread too.
    assert kept["faults"]["main"] < pages // 10
    assert kept["faults"]["helper"] < pages // 10
