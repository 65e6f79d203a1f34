"""A host whose clock is far from the central site's would stamp every
measurement wrong: the worker measures the offset from its first heartbeat's
round trip and refuses to start beyond LATENCY_MAX_CLOCK_OFFSET_MS."""

from __future__ import annotations

import sys

from probes.fleet.keys import issue_key
from tests.regions.conftest import CLOCK_SCRIPT, ROOT, one_line


def test_a_host_an_hour_ahead_is_refused_in_one_line(region_host, make_region):
    region = make_region(slug="test-clock-lagos")
    key = issue_key(region).credential
    region_host.ingest()
    done = region_host.run(
        "worker",
        "--region",
        region.slug,
        "--hello-timeout",
        "60",
        argv0=[sys.executable, str(CLOCK_SCRIPT)],
        LATENCY_REGION_KEY=key,
        PYTHONPATH=str(ROOT),
    )
    assert done.returncode == 78, done.stdout + done.stderr
    line = one_line(done.stdout + done.stderr)
    assert "clock is off by +3" in line and "LATENCY_MAX_CLOCK_OFFSET_MS=5000" in line
