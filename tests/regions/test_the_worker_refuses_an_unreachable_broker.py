"""A broker that cannot be reached is one line naming it, its password
masked, and a status other than 78: systemd restarts the worker later."""

from __future__ import annotations

from devtools.embedded import free_port
from tests.regions.conftest import one_line


def test_an_unreachable_broker_is_one_line_with_the_password_masked(region_host):
    port = free_port()
    url = f"redis://:hunter2-broker-password@127.0.0.1:{port}/0"
    done = region_host.run(
        "worker", "--region", "af-lagos", LATENCY_BROKER_URL=url, LATENCY_REGION_KEY="la2_" + "B" * 43 + ".C" + "A" * 42
    )
    assert done.returncode not in (0, 78), done.stdout + done.stderr
    line = one_line(done.stdout + done.stderr)
    assert "unreachable" in line and f"127.0.0.1:{port}" in line
    assert "hunter2" not in done.stdout + done.stderr
    assert ":**@" in line
