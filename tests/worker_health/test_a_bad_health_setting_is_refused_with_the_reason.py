"""LATENCY_HEALTH_PORT and its companions are read with the bounds of the list of settings: a bad value, or a port
another process holds, is refused with one line naming the variable (the process then refuses to start), and an
unset port starts no server."""

from __future__ import annotations

import socket

import pytest

from probes.runtime.health import HealthConfigError, serve_from_env


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"LATENCY_HEALTH_PORT": "http"}, "LATENCY_HEALTH_PORT='http' is not a number"),
        ({"LATENCY_HEALTH_PORT": "70000"}, "LATENCY_HEALTH_PORT=70000 must be between 0 and 65535"),
        ({"LATENCY_HEALTH_PORT": "80.5"}, "LATENCY_HEALTH_PORT=80.5 is not a whole number"),
        (
            {"LATENCY_HEALTH_PORT": "8001", "LATENCY_HEALTH_STALE_SECONDS": "1"},
            "LATENCY_HEALTH_STALE_SECONDS=1 must be between 2 and 3600",
        ),
    ],
)
def test_a_value_out_of_its_bounds_is_refused_naming_the_variable(env, reason):
    with pytest.raises(HealthConfigError) as refused:
        serve_from_env("consumer", env)
    assert str(refused.value) == reason


def test_a_port_another_process_holds_is_refused_naming_it():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(HealthConfigError) as refused:
            serve_from_env("consumer", {"LATENCY_HEALTH_PORT": str(port), "LATENCY_HEALTH_HOST": "127.0.0.1"})
    assert str(refused.value).startswith(f"LATENCY_HEALTH_PORT={port}: cannot listen on 127.0.0.1:{port} (")


@pytest.mark.parametrize("value", ["", "0"])
def test_an_unset_port_starts_no_server(value):
    assert serve_from_env("consumer", {"LATENCY_HEALTH_PORT": value}) is None
