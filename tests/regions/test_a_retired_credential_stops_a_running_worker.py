"""Rotating a region's credential with no overlap ends the old one at once:
a worker still running with it is told so by the answer to its next
heartbeat, logs the reason and stops with status 78 (not restarted)."""

from __future__ import annotations

from datetime import timedelta

from probes.fleet.keys import issue_key
from probes.models import Worker
from tests.support import wait_for


def test_a_worker_whose_credential_is_retired_stops_with_status_78(region_host, make_region):
    region = make_region(slug="test-rotate-lagos")
    credential = issue_key(region).credential
    region_host.ingest()
    worker = region_host.start(
        "worker", "--region", region.slug, LATENCY_REGION_KEY=credential, LATENCY_HEARTBEAT_SECONDS="1"
    )
    wait_for(lambda: Worker.objects.filter(region=region).exists(), 90, message="the worker's first beats")
    issue_key(region, overlap=timedelta(0))
    wait_for(lambda: worker.popen.poll() is not None, 90, message="the worker to stop")
    assert worker.popen.returncode == 78, worker.log()
    refusals = [line for line in worker.log().splitlines() if "refuses this worker" in line]
    assert len(refusals) == 1 and "retired" in refusals[0], worker.log()
