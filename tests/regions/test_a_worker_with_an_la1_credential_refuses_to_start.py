"""A credential of an earlier release (la1_) carries no central key, so its
worker could not tell the central site's run orders from anyone else's: it
refuses to start, in one line saying how to get a new credential, with
status 78 (systemd does not restart it)."""

from __future__ import annotations

from tests.regions.conftest import one_line


def test_an_la1_credential_is_refused_naming_the_command_for_a_new_one(region_host):
    old = "la1_" + "Q" * 43
    done = region_host.run("worker", "--region", "af-lagos", LATENCY_REGION_KEY=old)
    assert done.returncode == 78, done.stdout + done.stderr
    line = one_line(done.stdout + done.stderr)
    assert line.startswith("latency-atlas: refusing to start: LATENCY_REGION_KEY is a credential of an earlier")
    assert "carries no central key" in line and "manage.py region_key af-lagos" in line
    assert "Q" * 8 not in line
