"""A region host as it will run: the wheel, built once per session and installed in a fresh virtual
environment in a temporary folder from a wheelhouse (no package index), started there with only a broker
URL, its CA and the region's credential in its environment (no settings module, no database URL, no secret
key, no PYTHONPATH), over a TLS Redis with a password or a RabbitMQ vhost with a user per region
(devtools/brokers.py).

The central side (ingest worker, scheduler) is the suite's own `pipeline` (tests/conftest.py), pointed
at the same broker; its channel layer and slot keys stay on the suite's plain Redis."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.brokers import RabbitVhost, TlsRedis, Unavailable
from tests.support import ROOT, Proc, wait_for

# Run instead of the console script when a test must know what the worker imported: an audit hook
# notes every module of the site's (the `latency` package: settings, URLs, ASGI) and every part of Django
# that reads settings or opens a database (conf, db, apps, core) that the process loads: it must load none.
# kombu imports django.utils.functional when Django is installed (to encode lazy strings): plain code, no
# settings, so it is not counted.
GUARD = """
import sys
WATCHED = ("latency", "django.conf", "django.db", "django.apps", "django.core")
def _watch(event, args):
    if event == "import" and (args[0] in WATCHED or args[0].startswith(tuple(w + "." for w in WATCHED))):
        with open("imported-django.txt", "a") as out:
            out.write(args[0] + "\\n")
sys.addaudithook(_watch)
sys.argv[0] = "latency-atlas"
from probes.worker.cli import main
sys.exit(main())
"""

# What every test's region worker is given besides its broker and credential: a short visibility timeout
# (a killed worker's run comes back within seconds), frequent heartbeats, and the provider key the test
# targets name (tests/factories.py), as a region host's environment file would.
WORKER_ENV = {"LATENCY_VISIBILITY_TIMEOUT": "4", "LATENCY_HEARTBEAT_SECONDS": "2", "TEST_API_KEY": "sk-test-e2e"}


@dataclass
class RegionHost:
    """The virtual environment the wheel went into, and the folder a worker runs in (its cwd and HOME)."""

    root: Path
    venv: Path

    @property
    def script(self) -> Path:
        return self.venv / "bin" / "latency-atlas"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def base_env(self) -> dict[str, str]:
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        return {"PATH": f"{self.venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}

    def imported_django(self) -> list[str]:
        marker = self.root / "imported-django.txt"
        return marker.read_text().split() if marker.exists() else []


def _run(args: list, cwd: Path) -> None:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")


@pytest.fixture(scope="session")
def region_host(tmp_path_factory, region_host_venv) -> RegionHost:
    """The region host's venv (tests/conftest.py: built once per run, as a region host installs it, offline) with a
    folder of this session's own to run in."""
    return RegionHost(root=tmp_path_factory.mktemp("region-host"), venv=region_host_venv)


@pytest.fixture
def tls_redis(tmp_path) -> TlsRedis:
    broker = TlsRedis(tmp_path / "tls-redis")
    try:
        broker.start()
    except Unavailable as exc:
        pytest.skip(str(exc))
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def rabbitmq_unavailable() -> str | None:
    """Why the machine's RabbitMQ cannot be used, asked once (rabbitmqctl status costs seconds), or None."""
    try:
        RabbitVhost.check_available()
    except Unavailable as exc:
        return str(exc)
    return None


@pytest.fixture
def rabbitmq(rabbitmq_unavailable) -> RabbitVhost:
    if rabbitmq_unavailable:
        pytest.skip(rabbitmq_unavailable)
    vhost = RabbitVhost().create()
    yield vhost
    vhost.remove()


class Fleet:
    """The central processes and region workers of one test, on one broker."""

    def __init__(self, pipeline, host: RegionHost, central_env: dict[str, str], worker_env: dict[str, str]) -> None:
        self.pipeline = pipeline
        self.host = host
        self.central_env = central_env
        self.worker_env = worker_env
        self.workers: list[Proc] = []

    def start_ingest(self) -> Proc:
        proc = self.pipeline.start_ingest(**self.central_env)
        # Its queues (ingest, health) exist before any worker publishes to them: on RabbitMQ a region's
        # user may publish to them but not declare them.
        wait_for(lambda: " ready." in proc.log(), 60, message="the ingest worker to be ready")
        return proc

    def start_scheduler(self) -> Proc:
        return self.pipeline.start_scheduler(**self.central_env)

    def start_worker(self, slug: str, credential: str, *, guard: bool = False, **extra: str) -> Proc:
        """A worker of the wheel's venv, run from the host folder. guard=True runs it under GUARD (which
        records any Django import), otherwise through the console script itself."""
        env = {**self.worker_env, "LATENCY_REGION_KEY": credential, **extra}
        if "LATENCY_BROKER_URL" not in env:
            env["LATENCY_BROKER_URL"] = self.region_url(slug)
        argv = [str(self.host.python), "-c", GUARD] if guard else [str(self.host.script)]
        argv += ["worker", "--region", slug]
        log = self.pipeline.tmp_path / f"worker-{slug}-{len(self.workers)}.log"
        proc = Proc(
            ["latency-atlas", "worker", slug], env, log, argv=argv, base_env=self.host.base_env(), cwd=self.host.root
        )
        self.workers.append(proc)
        self.pipeline.procs.append(proc)
        self.pipeline.region_workers.append(proc)
        return proc

    def region_url(self, slug: str) -> str:
        raise NotImplementedError

    def stop_workers(self) -> None:
        for proc in self.workers:
            proc.terminate()
        for proc in self.workers:
            proc.stop()


class TlsRedisFleet(Fleet):
    def __init__(self, pipeline, host: RegionHost, broker: TlsRedis) -> None:
        ca = str(broker.ca_path)
        super().__init__(
            pipeline,
            host,
            {"CELERY_BROKER_URL": broker.url(0), "LATENCY_BROKER_CA": ca},
            {"LATENCY_BROKER_CA": ca, **WORKER_ENV},
        )
        self.broker = broker

    def region_url(self, slug: str) -> str:
        return self.broker.url(0)

    def celery_app(self):
        """A Celery app of the test's own on the TLS broker (to publish what a forger would)."""
        from celery import Celery

        from latency.env import broker_tls

        app = Celery("latency-e2e-forger", broker=self.broker.url(0))
        app.conf.update(task_serializer="json", broker_use_ssl=broker_tls(self.broker.url(0), str(self.broker.ca_path)))
        return app


class RabbitFleet(Fleet):
    def __init__(self, pipeline, host: RegionHost, vhost: RabbitVhost) -> None:
        super().__init__(
            pipeline,
            host,
            {"CELERY_BROKER_URL": vhost.central_url},
            dict(WORKER_ENV),
        )
        self.vhost = vhost

    def region_url(self, slug: str) -> str:
        if slug not in self.vhost.region_users:
            self.vhost.add_region(slug)
        return self.vhost.region_url(slug)


@pytest.fixture
def tls_fleet(pipeline, region_host, tls_redis) -> TlsRedisFleet:
    fleet = TlsRedisFleet(pipeline, region_host, tls_redis)
    yield fleet
    fleet.stop_workers()


@pytest.fixture
def rabbit_fleet(pipeline, region_host, rabbitmq) -> RabbitFleet:
    fleet = RabbitFleet(pipeline, region_host, rabbitmq)
    yield fleet
    fleet.stop_workers()


@pytest.fixture
def credential():
    """A new credential for a region (the text a region host is given once)."""
    from probes.fleet.keys import issue_key

    def issue(region) -> str:
        return issue_key(region).credential

    return issue


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGS` as an operator runs it on the central host, against the test database."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
