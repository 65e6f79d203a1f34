"""At start a worker checks that the central site's answers verify with the
central key its credential carries. A credential issued before the central
key was rotated (the overlap over), or by another site, holds none the site
signs with: the worker refuses to start, in one line saying so and how to
get a new credential, rather than refuse every run order in silence."""

from __future__ import annotations

from datetime import timedelta

from probes.fleet import central
from probes.fleet.keys import issue_key
from tests.regions.conftest import one_line


def test_a_credential_older_than_the_central_key_refuses_to_start(region_host, make_region):
    region = make_region(slug="test-central-oslo")
    credential = issue_key(region).credential
    central.rotate(timedelta(0))  # the credential's central key signs no more
    region_host.ingest()
    done = region_host.run("worker", "--region", region.slug, "--hello-timeout", "10", LATENCY_REGION_KEY=credential)
    assert done.returncode == 78, done.stdout + done.stderr
    line = one_line(done.stderr)
    assert "the answer to the starting heartbeat of region test-central-oslo cannot be believed" in line
    assert "which this worker's credential does not hold" in line
    assert "manage.py region_key test-central-oslo" in line
