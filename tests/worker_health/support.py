"""What the worker-health tests share: start one of the three processes with a health port, ask its endpoints,
stop it as a runner does."""

from __future__ import annotations

import http.client
import json
import time
import tomllib
from dataclasses import dataclass

from devtools.embedded import free_port
from tests.support import ROOT, Proc, wait_for

# What deploy/processes.toml gives each process between SIGTERM and SIGKILL: the requirement of issue 51.
PROCESSES = tomllib.loads((ROOT / "deploy" / "processes.toml").read_text())


def stop_seconds(name: str) -> float:
    return float(PROCESSES[name]["stop_seconds"])


@dataclass
class Answer:
    status: int
    body: dict


def ask(port: int, path: str, method: str = "GET") -> Answer | None:
    """The health server's answer, or None while nothing answers on the port."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path)
        response = conn.getresponse()
        raw = response.read()
    except OSError:
        return None
    finally:
        conn.close()
    return Answer(response.status, json.loads(raw) if raw else {})


def running(proc: Proc) -> None:
    assert proc.popen.poll() is None, f"{proc.args} exited with {proc.popen.returncode}:\n{proc.log()}"


def wait_until_ready(proc: Proc, port: int, deadline_s: float = 90) -> Answer:
    def ready():
        running(proc)
        answer = ask(port, "/readyz")
        return answer if answer is not None and answer.status == 200 else None

    return wait_for(ready, deadline_s, message=f"{proc.args[0]} to answer /readyz 200 on port {port}")


def sigterm_to_exit(proc: Proc, deadline_s: float) -> float:
    """SIGTERM, as a runner stops it; the seconds until it exited (monotonic). Fails when it has not exited with
    status 0 within deadline_s."""
    started = time.monotonic()
    proc.terminate()
    wait_for(lambda: proc.popen.poll() is not None, deadline_s, message=f"{proc.args[0]} to exit after SIGTERM")
    took = time.monotonic() - started
    assert proc.popen.returncode == 0, proc.log()
    return took


def health_env(**extra: str) -> tuple[int, dict[str, str]]:
    port = free_port()
    return port, {"LATENCY_HEALTH_PORT": str(port), "LATENCY_HEALTH_HOST": "127.0.0.1", **extra}
