"""Helpers for tests that run the real processes: managed subprocesses and a
TCP proxy that can cut a service off (a real outage, at the socket level)."""

from __future__ import annotations

import base64
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from devtools.harness import wait_for  # tests import it from here too

if TYPE_CHECKING:
    import redis

ROOT = Path(__file__).resolve().parent.parent


# The hour of day of the `now` fixture: just after midnight UTC, where a window of a day or more crosses into
# the day before and the current day has only its first hour.
NOW_HOUR = 0


def half_past(hour: int, real_now: datetime) -> datetime:
    """The latest hour:30:00 UTC not after real_now: rows written relative to it are never in the real future (the
    database's own clock is not moved), and a clock started there stays in its hour for 30 minutes."""
    moment = real_now.replace(hour=hour, minute=30, second=0, microsecond=0)
    return moment if moment <= real_now else moment - timedelta(days=1)


@contextmanager
def clock_at_half_past(hour: int) -> Iterator[datetime]:
    """The process's clock moved to the latest hour:30 UTC and ticking from there (time-machine); yields the moment."""
    import time_machine

    moment = half_past(hour, datetime.now(UTC))
    with time_machine.travel(moment, tick=True):
        yield moment


@contextmanager
def shared_rows(django_db_blocker) -> Iterator[None]:
    """Rows a whole module's tests read, written once in a transaction that each test's own (pytest-django's db
    fixture: a savepoint inside it) starts from, and rolled back after the module's last test: the data of a
    module whose tests only read it, built once instead of once per test. With the clock at the `now` fixture's
    moment, which each test's `now` moves it back to.

    Only for modules whose tests use `db`, never `transactional_db` (its flush would commit into this
    transaction)."""
    from django.db import transaction

    with django_db_blocker.unblock(), clock_at_half_past(NOW_HOUR), transaction.atomic():
        yield
        transaction.set_rollback(True)


class Proc:
    """A `manage.py` command in its own process group, logging to a file.

    argv runs a whole command line instead (a systemd unit's ExecStart); base_env replaces this
    process's environment underneath env (a unit sees only what systemd gives it); cwd is where it
    runs (the repository unless given: a region host's worker runs far from it)."""

    def __init__(
        self,
        args: list[str],
        env: dict[str, str],
        log_path: Path,
        *,
        argv: list[str] | None = None,
        base_env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.args = args
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.popen = subprocess.Popen(
            argv or [sys.executable, "manage.py", *args],
            cwd=cwd or ROOT,
            env={**(os.environ if base_env is None else base_env), "PYTHONUNBUFFERED": "1", **env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._terminated = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the whole group: no chance to acknowledge or clean up."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(timeout=10)

    def terminate(self) -> None:
        """SIGTERM the group, once, without waiting: stopping several processes together costs the slowest
        one's shutdown, not the sum of them (stop() then waits)."""
        if self.popen.poll() is None and not self._terminated:
            self._terminated = True
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def stop(self, timeout: float = 15) -> int | None:
        if self.popen.poll() is None:
            # A second SIGTERM could turn a warm shutdown under way into a different one.
            self.terminate()
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                # Said out loud: a worker that hangs on SIGTERM is a bug (it once hid one), even in
                # a test that does not look at the exit status.
                warnings.warn(
                    f"{self.args} ignored SIGTERM for {timeout:g} s and was killed", RuntimeWarning, stacklevel=2
                )
        self._log.close()
        return self.popen.returncode


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a service. `down()` drops every open
    connection and refuses new ones, as a crashed server would; `up()` heals.
    `stall()` forwards nothing more while keeping every connection open (new
    ones are let in by the kernel and wait too), as a network partition does:
    a peer waiting for an answer waits; `resume()` delivers what was held.
    A target host that is a directory is a PostgreSQL unix socket directory
    (the embedded server listens on no TCP port)."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._unix_path = f"{target_host}/.s.PGSQL.{target_port}" if target_host.startswith("/") else None
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._listener, selectors.EVENT_READ, None)
        self._pairs: dict[socket.socket, socket.socket] = {}
        self._up = True
        self._stalled = threading.Event()
        self._stop = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def down(self) -> None:
        with self._lock:
            self._up = False
            for s in list(self._pairs):
                self._close(s)

    def up(self) -> None:
        with self._lock:
            self._up = True

    def stall(self) -> None:
        self._stalled.set()

    def resume(self) -> None:
        self._stalled.clear()

    def close(self) -> None:
        self._stop = True
        self._thread.join(timeout=5)
        with self._lock:
            for s in list(self._pairs):
                self._close(s)
        self._listener.close()

    def _connect(self) -> socket.socket:
        if self._unix_path is None:
            return socket.create_connection(self.target, timeout=5)
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.settimeout(5)
        try:
            upstream.connect(self._unix_path)
        except OSError:
            upstream.close()
            raise
        return upstream

    def _close(self, s: socket.socket) -> None:
        peer = self._pairs.pop(s, None)
        for sock in (s, peer):
            if sock is None:
                continue
            self._pairs.pop(sock, None)
            try:
                self._sel.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()

    def _run(self) -> None:
        while not self._stop:
            if self._stalled.is_set():
                # Not selecting at all: what arrives stays in the kernel's buffers until resume().
                time.sleep(0.05)
                continue
            for key, _ in self._sel.select(timeout=0.1):
                with self._lock:
                    sock = key.fileobj
                    if sock is self._listener:
                        try:
                            client, _ = self._listener.accept()
                        except BlockingIOError:
                            continue
                        if not self._up:
                            client.close()
                            continue
                        try:
                            upstream = self._connect()
                        except OSError:
                            client.close()
                            continue
                        for s in (client, upstream):
                            s.setblocking(False)
                            self._sel.register(s, selectors.EVENT_READ, None)
                        self._pairs[client] = upstream
                        self._pairs[upstream] = client
                        continue
                    if sock not in self._pairs:
                        continue
                    try:
                        data = sock.recv(65536)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    if not data:
                        self._close(sock)
                        continue
                    try:
                        self._pairs[sock].setblocking(True)
                        self._pairs[sock].sendall(data)
                        self._pairs[sock].setblocking(False)
                    except OSError:
                        self._close(sock)


def queued_messages(r: redis.Redis, queue: str) -> list[dict]:
    """Decode the run messages waiting in a kombu Redis queue, oldest first:
    each list entry is a JSON envelope whose body is base64 JSON
    [args, kwargs, embed]; our task takes the signed order as its one arg,
    and what is returned is each order's signed content (the slot's message)."""
    from probes.scheduling import RUN_TASK

    out = []
    for raw in reversed(r.lrange(queue, 0, -1)):  # kombu LPUSHes and BRPOPs
        envelope = json.loads(raw)
        assert envelope["properties"]["body_encoding"] == "base64"
        assert envelope["headers"]["task"] == RUN_TASK
        args, kwargs, _embed = json.loads(base64.b64decode(envelope["body"]))
        assert kwargs == {}
        (order,) = args
        # What the central site signed (probes.scheduling.signed_order); the signature is the worker's to check.
        assert order["kind"] == "order" and order["signatures"]
        out.append(json.loads(order["body"]))
    return out


def mock_log(server, request_id: str) -> dict:
    """The mock LLM server's own record of one request (CLOCK_MONOTONIC stamps: when it received the
    request, sent the headers, the first token, the last byte), for comparing with what a client saw."""
    import json
    import ssl
    import urllib.request

    ctx = ssl.create_default_context(cafile=server.ca_pem_path) if server.ca_pem_path else None
    with urllib.request.urlopen(f"{server.base_url}/_mock/log/{request_id}", context=ctx, timeout=5) as resp:
        return json.load(resp)


def streaming_since(server, known: set[str]):
    """A condition for wait_for: a call the mock LLM server took after `known` (its log's ids when the test began:
    the session's server holds earlier tests' requests too) has sent its first token and not yet its last byte."""

    def streaming() -> bool:
        return any(
            rid not in known and rec["first_token_ns"] is not None and rec.get("last_byte_ns") is None
            for rid, rec in list(server._log.items())
        )

    return streaming


class ConnectionThread(threading.Thread):
    """Runs fn on a thread, so on a Django connection of its own (closed when fn returns); result() waits up to
    `deadline_s` for it and re-raises its error in the test's thread."""

    def __init__(self, fn, deadline_s: float = 20.0) -> None:
        super().__init__(daemon=True)
        self.fn, self.deadline_s, self.value, self.error = fn, deadline_s, None, None

    def run(self) -> None:
        from django.db import connection

        try:
            self.value = self.fn()
        except BaseException as exc:  # handed to the test's thread by result()
            self.error = exc
        finally:
            connection.close()

    def result(self):
        self.join(self.deadline_s)
        assert not self.is_alive(), f"still running after {self.deadline_s} s"
        if self.error is not None:
            raise self.error
        return self.value


def ingest_payload(probe, region, started: datetime, **timings: float) -> dict:
    """One measurement as a region worker sends it to ingest (probes.ingest.store), with the given timings."""
    from probes.engine.result import Measurement as EngineResult

    return {
        "probe_id": probe.id,
        "target_id": probe.target_id,
        "region_id": region.id,
        "scheduled_for": started.isoformat(),
        "worker": "w",
        "result": EngineResult(started_at=started.isoformat(), **timings).to_dict(),
    }


def assert_point_picked_from(point: dict, values: list[float], percentile: float) -> None:
    """A time-series point's p50, p95 and chosen percentile are those of the histogram of `values`."""
    from probes.histogram import histogram_of

    hist = histogram_of(values)
    assert (point["p50"], point["p95"], point["value"]) == (
        hist.percentile(0.5),
        hist.percentile(0.95),
        hist.percentile(percentile),
    )


def assert_rollups_read_as_raw(since: datetime, until: datetime, metrics: tuple[str, ...], **scope) -> None:
    """read_window with rollups (nothing cached) equals the reading of raw rows alone, group by group: samples,
    errors and each metric's histogram, every group with samples and values."""
    from probes.readings.cache import merge_cache
    from probes.readings.window import read_window

    merge_cache.clear()
    rolled = read_window(since, until, metrics=metrics, **scope)
    raw = read_window(since, until, metrics=metrics, rollups=False, **scope)
    assert set(rolled) == set(raw) and raw
    for group, reading in raw.items():
        assert (rolled[group].samples, rolled[group].errors) == (reading.samples, reading.errors) != (0, 0)
        for metric in metrics:
            assert rolled[group].hists[metric] == reading.hists[metric]
            assert reading.hists[metric].count


def race_two_evaluators(pipeline, table: str, row_id: int, now: datetime) -> list[str]:
    """Two `evaluate_alerts --now NOW` processes judging the same state at once, made certain rather than hoped for:
    the state's row (`row_id` of `table`) is held locked until both are waiting on it, then let go. Returns their
    logs once both have ended, each with exit status 0."""
    import psycopg

    def waiting_on_locks(conn) -> int:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s", [f"%{table}%"]
        ).fetchone()[0]

    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as watcher:
        holder.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE", [row_id])
        procs = [pipeline.start("evaluate_alerts", "--now", now.isoformat()) for _ in range(2)]
        wait_for(lambda: waiting_on_locks(watcher) == 2, 120, message="both evaluators to wait on the state's row")
        holder.commit()
        for proc in procs:
            wait_for(lambda proc=proc: proc.popen.poll() is not None, 120, message="an evaluator to finish")
    logs = [proc.log() for proc in procs]
    assert all(proc.popen.returncode == 0 for proc in procs), logs
    return logs


def assert_one_evaluator_moved_it(pipeline, logs: list[str]) -> None:
    """One of two racing evaluators opened the incident and queued its one notification; the other left it."""
    from probes.models import Delivery, Incident

    assert sorted("1 opened" in log for log in logs) == [False, True], logs
    assert any("1 left to a concurrent pass" in log for log in logs), logs
    assert Incident.objects.count() == 1
    assert Delivery.objects.count() == 1
    tasks = [json.loads(raw)["headers"]["task"] for raw in pipeline.redis.lrange("maintenance", 0, -1)]
    assert tasks == ["probes.deliver_notification"]
