"""The images as they are built and run here (devtools/images.py): the Debian base bootstrapped once with mmdebstrap
and cached, both Containerfiles built with `buildah bud --pull=never` once per session, and containers of them run
with `buildah run --isolation chroot` on the host's network against the suite's PostgreSQL and Redis.

Every container runs with a read-only root file system (the image's directories bound read-only over themselves)
and a tmpfs on /tmp, as the images promise to work. Its processes are started from the image's own ENTRYPOINT, and
stopped as an orchestrator stops them: SIGTERM to the container's process, SIGKILL only after a grace period."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools import images
from tests.support import Proc, TcpProxy

CENTRAL = "localhost/latency-atlas:test-images"
WORKER = "localhost/latency-atlas-worker:test-images"
# Bound read-only over themselves: with /tmp a tmpfs, what a read-only root leaves writable (/etc stays as it is:
# buildah mounts the host's resolv.conf and hosts into it).
READ_ONLY = ("app", "opt", "usr", "home", "var", "root")


@dataclass
class Images:
    central: str
    worker: str

    def entrypoint(self, image: str) -> list[str]:
        return list(images.image_config(image)["Entrypoint"])


@pytest.fixture(scope="session")
def built_images(tmp_path_factory) -> Images:
    """Both images, built once per run (under pytest-xdist the first worker to get here builds for all)."""
    try:
        images.install_tools()
    except images.ImageError as exc:
        pytest.skip(f"buildah and mmdebstrap are needed to build the images: {exc}")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(shared / "images.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "images-built").exists():
            images.ensure_base()
            images.build(CENTRAL, "Containerfile", target="central")
            images.build(WORKER, "Containerfile.worker")
            (shared / "images-built").touch()
    return Images(CENTRAL, WORKER)


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _command_name(pid: int) -> str:
    """argv[0]'s file name: buildah re-executes itself (/proc/self/exe) as its chroot helper, so the kernel's
    command name of that helper is not buildah's, its argv[0] is."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return ""
    return Path(argv0.decode(errors="replace")).name


def container_process(pid: int) -> int | None:
    """The container's own process under a `buildah run` (pid): the first descendant that is not one of buildah's
    (`buildah run`, then its chroot helper), the one a runtime would signal. Not deeper: a Celery worker's pool
    children are its own to stop."""
    current = pid
    while _command_name(current).startswith("buildah"):
        children = _children(current)
        if not children:
            return None
        current = children[0]
    return None if current == pid else current


class Container:
    """A working container of an image (`buildah from`), its environment set in its configuration as a runtime's
    --env would, files mounted read-only into it (secrets)."""

    def __init__(self, image: str, env: dict[str, str], log_dir: Path, files: dict[str, Path] | None = None) -> None:
        self.image = image
        self.log_dir = log_dir
        self.files = files or {}
        self.name = f"latency-test-{uuid.uuid4().hex[:12]}"
        self.procs: list[Proc] = []
        subprocess.run(["buildah", "from", "--pull=never", "--name", self.name, image], check=True, capture_output=True)
        words = [word for key, value in env.items() for word in ("--env", f"{key}={value}")]
        subprocess.run(["buildah", "config", *words, self.name], check=True, capture_output=True)
        self.root = Path(
            subprocess.run(["buildah", "mount", self.name], check=True, capture_output=True, text=True).stdout.strip()
        )

    def argv(self, command: list[str]) -> list[str]:
        mounts = ["--mount", "type=tmpfs,destination=/tmp"]
        for folder in READ_ONLY:
            if (self.root / folder).is_dir():
                mounts += ["--mount", f"type=bind,source={self.root / folder},destination=/{folder},ro=true"]
        for inside, outside in self.files.items():
            mounts += ["--mount", f"type=bind,source={outside},destination={inside},ro=true"]
        return ["buildah", "run", "--isolation", "chroot", "--network", "host", *mounts, self.name, "--", *command]

    def run(self, command: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(command), capture_output=True, text=True, timeout=timeout, check=False, env=os.environ
        )

    def start(self, label: str, command: list[str]) -> Proc:
        proc = Proc([label], {}, self.log_dir / f"{label}.log", argv=self.argv(command))
        self.procs.append(proc)
        return proc

    def remove(self) -> None:
        for proc in self.procs:
            stop(proc)
        subprocess.run(["buildah", "umount", self.name], capture_output=True, check=False)
        subprocess.run(["buildah", "rm", self.name], capture_output=True, check=False)


def stop(proc: Proc, grace: float = 30) -> int | None:
    """SIGTERM to the container's process, as a runtime sends it; the `buildah run` around it ends with it. Its
    exit status, or None when it had to be killed."""
    if proc.popen.poll() is None:
        inner = container_process(proc.pid)
        if inner is not None:
            try:
                os.kill(inner, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.stop(timeout=5)
                return None
    proc.stop(timeout=5)
    return proc.popen.returncode


@pytest.fixture
def containers(tmp_path, request) -> Iterator:
    """make(image, env, files=...) -> Container; each is removed after the test, its processes stopped first. A
    failed test prints their logs."""
    made: list[Container] = []

    def make(image: str, env: dict[str, str], files: dict[str, Path] | None = None) -> Container:
        container = Container(image, env, tmp_path, files)
        made.append(container)
        return container

    yield make
    rep = getattr(request.node, "rep_call", None)
    for container in made:
        if rep is not None and rep.failed:
            for proc in container.procs:
                print(f"===== {container.image} {proc.args} =====\n{proc.log()}")
        container.remove()


@dataclass
class Services:
    """The suite's PostgreSQL and Redis as a container on the host's network reaches them."""

    settings: dict
    redis_url: str
    port: int

    def database_url(self, name: str) -> str:
        user = self.settings.get("USER") or ""
        password = self.settings.get("PASSWORD") or ""
        auth = f"{user}:{password}@" if password else f"{user}@"
        return f"postgres://{auth}127.0.0.1:{self.port}/{name}"

    def maintenance(self):
        import psycopg

        return psycopg.connect(self.database_url("postgres"), autocommit=True)


@pytest.fixture
def services(test_redis_url) -> Iterator[Services]:
    """The database server over TCP on loopback: the embedded one listens on a unix socket only, which a
    container does not see, so a proxy on 127.0.0.1 forwards to it (a server on TCP is forwarded to as well)."""
    from django.db import connection

    settings = dict(connection.settings_dict)
    host = settings.get("HOST") or "/var/run/postgresql"
    proxy = TcpProxy(host, int(settings.get("PORT") or 5432))
    try:
        yield Services(settings, test_redis_url, proxy.port)
    finally:
        proxy.close()


def secret_file(folder: Path, name: str, value: str) -> Path:
    """A secret as Docker and Kubernetes mount one: a file the container's user may read."""
    path = folder / name
    path.write_text(value + "\n")
    path.chmod(0o644)
    return path


def readyz(port: int) -> tuple[int, dict] | None:
    import http.client

    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        body = response.read()
        conn.close()
    except OSError:
        return None
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, {"body": body[:500].decode(errors="replace")}


def new_secret_key() -> str:
    return secrets.token_urlsafe(50)
