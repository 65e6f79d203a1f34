"""The `make demo` path end to end: embedded PostgreSQL and Redis in a temporary folder, measurements
from several regions, then Ctrl-C, a clean exit and no process left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from devtools import embedded
from tests.support import ROOT, wait_for

pytestmark = pytest.mark.timeout(480)


def _processes_mentioning(text: str) -> list[tuple[int, str]]:
    """Live processes whose command line contains text (our state folder names every server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and embedded.pid_alive(int(entry.name)):
            found.append((int(entry.name), cmdline))
    return found


def _regions_measured(database_url: str) -> int:
    import psycopg

    from latency.env import database_from_url

    db = database_from_url(database_url)
    try:
        with psycopg.connect(
            host=db["HOST"],
            port=db["OPTIONS"].get("port") or db["PORT"] or None,
            user=db["USER"],
            dbname=db["NAME"],
            connect_timeout=3,
        ) as conn:
            return conn.execute("SELECT count(DISTINCT region_id) FROM probes_measurement").fetchone()[0]
    except psycopg.Error:
        return 0  # not migrated yet, or stopping


def _start_demo(state: Path, port: int, log: Path) -> subprocess.Popen:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "LATENCY_CHANNEL_PREFIX"}
    }
    env["PYTHONUNBUFFERED"] = "1"
    return subprocess.Popen(
        [sys.executable, "-m", "devtools.demo", "--state", str(state), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=open(log, "ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen, sig=signal.SIGINT) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


def test_demo_starts_measures_and_stops_cleanly(tmp_path):
    from devtools.demo import MOCK_PORT_FILE

    state = tmp_path / "state"
    log = tmp_path / "demo.log"
    port = embedded.free_port()
    # The port an earlier run chose for the mock LLM server: used again.
    mock_port = embedded.free_port()
    state.mkdir()
    (state / MOCK_PORT_FILE).write_text(f"{mock_port}\n")
    started = time.monotonic()
    proc = _start_demo(state, port, log)
    try:
        # The start includes the full default history (a week for 5 targets x 15 regions): the one test that loads
        # it at its real size. The deadline is generous, for a busy machine; the figure is printed.
        manifest = wait_for(
            lambda: (
                (state / "services.json").exists()
                and "children" in json.loads((state / "services.json").read_text())
                and json.loads((state / "services.json").read_text())
            ),
            timeout=240,
            interval=0.3,
            message=f"the demo to start (see {log})",
        )
        print(f"ready {time.monotonic() - started:.1f} s after start")
        output = log.read_text()
        assert "login: admin / " in output
        history = re.search(r"\[ok\] history: (\d+) calls \((\d+) target x region series", output)
        assert history, output
        calls, series = int(history[1]), int(history[2])
        assert series == 5 * 15
        # A call every 2 minutes for 7 days, every series.
        assert calls == pytest.approx(series * 7 * 24 * 30, abs=2 * series)
        assert "2 incidents recorded by the alert evaluator" in output
        assert "live incident: Demo Gemini-style (GCP europe-west3) answers slowly for eu-frankfurt" in output
        # services.json names every URL, the mock server's too, and it answers there.
        assert manifest["mockllm_url"] == f"http://localhost:{mock_port}"
        with urllib.request.urlopen(f"{manifest['mockllm_url']}/health", timeout=10) as answer:
            assert answer.status == 200
        wait_for(
            lambda: _regions_measured(manifest["database_url"]) >= 3,
            timeout=90,
            interval=1,
            message="measurements from 3 regions",
        )
        took = time.monotonic() - started
        print(f"measurements from >= 3 regions {took:.1f} s after start")
    finally:
        code = _stop(proc)
    output = log.read_text()
    assert code == 0, output
    assert "stopped embedded PostgreSQL and Redis" in output, output
    pids = [manifest["postgres_pid"], manifest["redis_pid"], *manifest["children"].values()]
    assert [p for p in pids if embedded.pid_alive(p)] == [], output
    assert _processes_mentioning(str(state)) == []


def test_demo_reuses_state_and_refuses_a_busy_port(tmp_path):
    """A second start on the same folder reuses the data; a port in use is a message, not a traceback."""
    import socket

    state = tmp_path / "state"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        done = subprocess.run(
            [sys.executable, "-m", "devtools.demo", "--state", str(state), "--port", str(busy.getsockname()[1])],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}},
        )
    assert done.returncode == 1
    assert "already in use" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert not (state / "postgres").exists()  # nothing was started

    # A state folder whose lock is held by a running start is refused with a message.
    lock = embedded.StateLock(state)
    lock.acquire()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "devtools.demo", "--state", str(state), "--port", str(embedded.free_port())],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}},
        )
    finally:
        lock.release()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "in use by another running start" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_embedded_servers_die_with_a_killed_parent(tmp_path):
    """SIGKILL of the process that started them leaves no server running (PR_SET_PDEATHSIG),
    and the next start on the same folder works."""
    state = tmp_path / "state"
    script = (
        "import signal, sys; from pathlib import Path; from devtools import embedded;"
        f"s = embedded.Services(Path({str(state)!r}), database_url=None, redis_url=None);"
        "s.lock.acquire(); s.start_postgres(); s.start_redis(); s.write_manifest();"
        "print('ready', flush=True); signal.pause()"
    )
    errors = tmp_path / "child.stderr"
    with errors.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        ready = proc.stdout.readline().strip()
        if ready != "ready":
            proc.wait(timeout=30)
        assert ready == "ready", errors.read_text()
        manifest = json.loads((state / "services.json").read_text())
    finally:
        proc.kill()
        proc.wait()
    wait_for(
        lambda: not embedded.pid_alive(manifest["postgres_pid"]) and not embedded.pid_alive(manifest["redis_pid"]),
        timeout=30,
        message="the embedded servers to stop after their parent was killed",
    )
    services = embedded.Services(state, database_url=None, redis_url=None)
    services.lock.acquire()
    try:
        assert services.start_postgres().startswith("postgres://")
        assert services.start_redis().startswith("redis://127.0.0.1:")
    finally:
        services.stop()
    assert _processes_mentioning(str(state)) == []
