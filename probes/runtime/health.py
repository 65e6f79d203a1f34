"""`/healthz` and `/readyz` of the processes that serve no HTTP of their own: the ingest worker, the scheduler and a
region worker (issue 51). Started when LATENCY_HEALTH_PORT is set, on a small HTTP server in a daemon thread.

The answers have the web's shape (latency/health.py): JSON, `/healthz` 200 while the process answers at all,
`/readyz` 200 with every check "ok", else 503 with each failed check named. What `/readyz` checks is the process's
own loop, which beats from where its work is done (a Celery worker's consumer loop: probes/runtime/celery_health.py;
the scheduler's tick: probes/scheduling.py), never from this server's thread: a loop that stopped beating for
LATENCY_HEALTH_STALE_SECONDS is stuck, and a stuck loop is not ready. A Celery consumer beats only while it is
connected to its broker, so a lost broker shows there too.

Plain Python, no Django: a region host has none (tests/boundaries). The thread is a daemon and the process never
waits for it: a stop is not held up by a prober's open connection.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from probes.conf import catalog

log = logging.getLogger(__name__)

LIVE, READY = "/healthz", "/readyz"
PORT, HOST, STALE = "LATENCY_HEALTH_PORT", "LATENCY_HEALTH_HOST", "LATENCY_HEALTH_STALE_SECONDS"
# A prober that opens a connection and sends nothing is dropped after this, so it holds no thread for long.
REQUEST_TIMEOUT_S = 5.0


class HealthConfigError(ValueError):
    """A health setting that cannot be used, with the one line saying why."""


def _number(env: Mapping[str, str], name: str) -> float:
    """A number of the list of settings (probes.conf.catalog), within its bounds; its default when unset."""
    entry = catalog.setting(name)
    assert isinstance(entry.default, int | float) and entry.minimum is not None and entry.maximum is not None
    raw = (env.get(name) or "").strip()
    if not raw:
        return float(entry.default)
    try:
        value = float(raw)
    except ValueError:
        raise HealthConfigError(f"{name}={raw[:40]!r} is not a number") from None
    if not math.isfinite(value) or not entry.minimum <= value <= entry.maximum:
        raise HealthConfigError(f"{name}={raw[:40]} must be between {entry.minimum:g} and {entry.maximum:g}")
    if entry.kind == "int" and value != int(value):
        raise HealthConfigError(f"{name}={raw[:40]} is not a whole number")
    return value


class Health:
    """What `/readyz` reads: when the process's loop last beat (monotonic clock), and whether it is stopping.

    beat() is called from the loop itself; a float assignment is atomic, so the loop never waits on a lock here."""

    def __init__(self, loop: str, stale_after_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.loop = loop
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._last: float | None = None
        self._idle: str | None = None
        self._stopping = False

    def beat(self) -> None:
        self._last = self._clock()
        self._idle = None

    def idle(self, why: str) -> None:
        """The loop stopped on purpose for a while (a consumer reconnecting to its broker): not ready, saying why."""
        self._idle = why

    def stopping(self) -> None:
        self._stopping = True

    @property
    def is_stopping(self) -> bool:
        return self._stopping

    def checks(self) -> dict[str, str]:
        if self._stopping:
            return {self.loop: "shutting down"}
        if self._idle is not None:
            return {self.loop: self._idle}
        last = self._last
        if last is None:
            return {self.loop: "not started"}
        age = self._clock() - last
        if age > self.stale_after_s:
            return {self.loop: f"loop stalled for {age:.0f} s"}
        return {self.loop: "ok"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT_S

    def _answer(self, head: bool) -> None:
        body: dict[str, object]
        if self.path.split("?", 1)[0] == LIVE:
            status, body = 200, {"status": "live"}
        elif self.path.split("?", 1)[0] == READY:
            checks = self.server.health.checks()
            ready = all(value == "ok" for value in checks.values())
            status, body = (200 if ready else 503), {"status": "ready" if ready else "not ready", "checks": checks}
        else:
            status, body = 404, {"status": "not found", "paths": [LIVE, READY]}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def log_message(self, format: str, *args: object) -> None:
        # A prober asks every few seconds: its requests would drown the worker's log.
        return

    def version_string(self) -> str:
        return "latency-atlas"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], health: Health) -> None:
        self.health = health
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        if self.address_family == socket.AF_INET6:
            # `::` answers IPv4 probers too, wherever the system allows it.
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


class HealthServer:
    """The HTTP server of one process, in a daemon thread."""

    def __init__(self, health: Health, host: str, port: int) -> None:
        self.health = health
        try:
            self._server = _Server((host, port), health)
        except OSError as exc:
            raise HealthConfigError(
                f"{PORT}={port}: cannot listen on {host or '*'}:{port} ({exc.strerror or exc})"
            ) from None
        self.address = self._server.server_address
        self._thread = threading.Thread(target=self._server.serve_forever, name="health-server", daemon=True)

    @property
    def port(self) -> int:
        return int(self.address[1])

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop answering (tests; a process that exits needs not: the thread is a daemon)."""
        self._server.shutdown()
        self._server.server_close()


# The process's health and its server, when LATENCY_HEALTH_PORT is set (one per process: the workers run one loop
# each). Read by the loop's beat and the shutdown hooks, which do nothing while it is None.
_current: dict[str, Health | HealthServer | None] = {"health": None, "server": None}


def current() -> Health | None:
    health = _current["health"]
    return health if isinstance(health, Health) else None


def beat() -> None:
    health = current()
    if health is not None:
        health.beat()


def stopping() -> None:
    health = current()
    if health is not None:
        health.stopping()


def serve_from_env(loop: str, env: Mapping[str, str] | None = None) -> HealthServer | None:
    """Start this process's health server when LATENCY_HEALTH_PORT is set (HealthConfigError when a setting is bad
    or the port cannot be had: the process then refuses to start, saying so). `loop` names the check of /readyz."""
    env = os.environ if env is None else env
    port = int(_number(env, "LATENCY_HEALTH_PORT"))
    if port == 0:
        return None
    host = (env.get("LATENCY_HEALTH_HOST") or "").strip() or str(catalog.setting(HOST).default)
    health = Health(loop, _number(env, "LATENCY_HEALTH_STALE_SECONDS"))
    server = HealthServer(health, host, port).start()
    _current.update(health=health, server=server)
    log.info("health: /healthz and /readyz on %s:%d", host, server.port)
    return server
