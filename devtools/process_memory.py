"""`python -m devtools.process_memory`: the memory each process of deploy/processes.toml holds once it serves, the
figures the Kubernetes manifests' resource requests are set from (deploy/kubernetes/).

    python -m devtools.embedded run -- .venv/bin/python -m devtools.process_memory [--settle 60]

Runs against the PostgreSQL and Redis of DATABASE_URL / REDIS_URL (`devtools.embedded run` gives it throwaway
ones): the list's migrate commands, then web, ingest, scheduler and one region worker with their list commands, as
tests/deploy runs the units, with a mock LLM server (devtools/mockllm) and the demo's targets probed from the
worker's region, so every process does its work while it is watched. Once each serves (the web answers
/readyz and its pages, the workers say they are ready), it waits --settle seconds with the pages asked for again,
and prints each process's VmRSS (resident now) and VmHWM (the highest resident) from /proc/PID/status, in MiB,
and the CPU it used meanwhile (/proc/PID/stat), in cores.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGION = "eu-frankfurt"
PAGES = ("/readyz", "/accounts/login/", "/", "/regions/eu-frankfurt/", "/api/")


def status_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB (/proc/PID/status)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used (/proc/PID/stat: utime and stime, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait(what: str, check, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise SystemExit(f"process_memory: {what} did not happen within {deadline_s:.0f} s")


def get(port: int, path: str) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": "127.0.0.1"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.process_memory", description=__doc__.split("\n")[0])
    parser.add_argument("--settle", type=float, default=60, help="seconds to watch once all serve (default 60)")
    opts = parser.parse_args(argv)
    for name in ("DATABASE_URL", "REDIS_URL"):
        if not os.environ.get(name):
            raise SystemExit(f"process_memory: {name} is not set (run it under `python -m devtools.embedded run --`)")
    processes = tomllib.loads((ROOT / "deploy" / "processes.toml").read_text())
    bin_dir = Path(sys.executable).parent
    tmp = Path(tempfile.mkdtemp(prefix="latency-memory-"))
    from devtools.embedded import free_port

    web_port, mock_port = free_port(), free_port()
    env = {
        **os.environ,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "STATIC_ROOT": str(tmp / "static"),
        "UVICORN_HOST": "127.0.0.1",
        "UVICORN_PORT": str(web_port),
        "PYTHONUNBUFFERED": "1",
    }

    def argv_of(command: list[str]) -> list[str]:
        return [str(bin_dir / command[0]), *command[1:]]

    for command in [*processes["migrate"]["commands"], *processes["migrate"].get("prepare", [])]:
        subprocess.run(argv_of(command), cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    seed = (
        "import django; django.setup(); from devtools.demo_seed import seed; from probes.models import Region; "
        f"seed('http://localhost:{mock_port}', list(Region.objects.filter(slug='{REGION}')))"
    )
    subprocess.run(
        [sys.executable, "-c", seed], cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "latency.settings"}, check=True
    )
    key = subprocess.run(
        [sys.executable, "manage.py", "region_key", REGION, "--overlap", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()

    children: dict[str, subprocess.Popen] = {}
    logs: dict[str, Path] = {}

    def start(name: str, argv: list[str], extra: dict[str, str] | None = None) -> None:
        logs[name] = tmp / f"{name}.log"
        with logs[name].open("wb") as log:
            children[name] = subprocess.Popen(
                argv, cwd=ROOT, env={**env, **(extra or {})}, stdout=log, stderr=subprocess.STDOUT
            )

    try:
        start("mockllm", [sys.executable, "-m", "devtools.mockllm", "--port", str(mock_port)])
        start("web", argv_of(processes["web"]["commands"][0]))
        for name in ("ingest", "scheduler", "worker"):
            extra = {"LATENCY_HEALTH_PORT": str(free_port())}
            if name == "worker":
                extra |= {"LATENCY_REGION": REGION, "LATENCY_REGION_KEY": key, "LATENCY_BROKER_URL": env["REDIS_URL"]}
            start(name, argv_of(processes[name]["commands"][0]), extra)

        def alive() -> None:
            for name, child in children.items():
                if child.poll() is not None:
                    raise SystemExit(f"process_memory: {name} exited ({child.returncode}): {logs[name].read_text()}")

        wait("the web's /readyz 200", lambda: alive() or get(web_port, "/readyz") == 200)
        wait("the ingest worker's ready line", lambda: alive() or " ready." in logs["ingest"].read_text())
        wait("the region worker's ready line", lambda: alive() or " ready." in logs["worker"].read_text())
        names = ("web", "ingest", "scheduler", "worker")
        started = time.monotonic()
        cpu_before = {name: cpu_seconds(children[name].pid) for name in names}
        while time.monotonic() < started + opts.settle:
            alive()
            for path in PAGES:
                get(web_port, path)
            time.sleep(2)
        elapsed = time.monotonic() - started
        print(f"{'process':<10} {'VmRSS MiB':>10} {'VmHWM MiB':>10} {'CPU cores':>10}")
        for name in names:
            figures = status_kib(children[name].pid)
            cores = (cpu_seconds(children[name].pid) - cpu_before[name]) / elapsed
            print(f"{name:<10} {figures['VmRSS'] / 1024:>10.1f} {figures['VmHWM'] / 1024:>10.1f} {cores:>10.3f}")
    finally:
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children.values():
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
