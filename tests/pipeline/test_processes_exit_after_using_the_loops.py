"""A process that has used the background event loops (probes.runtime: the probe loop and the broadcast
loop) exits by itself: a region worker or ingest worker on SIGTERM, a script at its end. Left open, the
loops' portals were collected during interpreter finalization, when their threads could no longer run,
and the process waited for ever (a finished test run once sat until CI's limit that way)."""

import subprocess
import sys

import pytest

from probes.models import Measurement
from tests.support import ROOT, wait_for

pytestmark = pytest.mark.timeout(180)

SCRIPT = """
import django
django.setup()
from probes import live, runtime

async def answer():
    return 42

assert runtime._probe_portal.get().call(answer) == 42
assert live._broadcast_portal.get().call(answer) == 42
print("used both loops", flush=True)
"""


def test_a_script_that_used_both_loops_exits_when_it_ends():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        # Generous: the failure this guards against is waiting for ever, not slowness.
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "used both loops" in done.stdout


def test_workers_that_have_probed_and_broadcast_stop_on_sigterm_without_being_killed(pipeline, llm_probe):
    llm_probe(slug="test-oslo", interval=10)
    ingest = pipeline.start_ingest()
    region = pipeline.start_region("test-oslo")
    pipeline.start_scheduler()
    wait_for(lambda: Measurement.objects.exists(), 60, message="a measurement, probed and broadcast")
    # Proc.stop sends SIGTERM and kills only when the wait runs out (status -9).
    assert region.stop(timeout=90) == 0, region.log()
    assert ingest.stop(timeout=90) == 0, ingest.log()
