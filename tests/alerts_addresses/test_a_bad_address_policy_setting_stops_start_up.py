"""A mistyped address policy setting stops the site at start-up, naming the variable: a policy silently
read as its default would let channels reach what the operator meant to refuse, or the reverse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the repository


def check(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("LATENCY_NOTIFY_ALLOW_PRIVATE", "maybe", "LATENCY_NOTIFY_ALLOW_PRIVATE='maybe' is not a boolean"),
        (
            "LATENCY_NOTIFY_DNS_SERVERS",
            "resolver.example",
            "LATENCY_NOTIFY_DNS_SERVERS: 'resolver.example' is not an IP address with an optional :port",
        ),
        ("LATENCY_NOTIFY_DNS_SERVERS", "192.0.2.53:70000", "LATENCY_NOTIFY_DNS_SERVERS: '192.0.2.53:70000' has a port"),
    ],
)
def test_the_site_refuses_to_start_naming_the_variable(name, value, says):
    run = check(**{name: value})

    assert run.returncode != 0
    assert says in run.stderr


def test_servers_with_and_without_ports_are_read():
    assert check(LATENCY_NOTIFY_DNS_SERVERS="192.0.2.53, 192.0.2.54:5353, [2001:db8::53]:53").returncode == 0
