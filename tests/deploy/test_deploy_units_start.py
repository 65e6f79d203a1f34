"""Every unit in deploy/ runs here as a plain process, with the command and the environment systemd would
give it (tests/deploy/units.py), on the suite's PostgreSQL and Redis: the set-up unit runs to
completion; each long-running one comes up (the web answers over HTTP as it does behind the TLS proxy,
the workers answer a Celery ping, the scheduler queues a due run) and leaves cleanly on SIGTERM, as
`systemctl stop` asks it to. Together they probe, store and serve a measurement."""

from __future__ import annotations

import http.client
import re
import secrets
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import pytest

from devtools.embedded import free_port
from probes.models import Measurement
from tests.deploy.units import SYSTEMD_BASE_ENV, Unit, read_unit, service_files
from tests.support import ROOT, Proc, wait_for

pytestmark = pytest.mark.timeout(240)

SERVICE_URLS = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "LATENCY_BROKER_URL")
SITE = "atlas.example.org"  # ALLOWED_HOSTS in deploy/latency.env.example
HTTPS = {"X-Forwarded-Proto": "https"}  # what the TLS proxy adds (deploy/nginx.conf)
REGION = "test-deploy-lagos"


@dataclass
class Deployment:
    """The units of deploy/ started as processes against the test services."""

    pipeline: object
    tmp_path: Path
    static_root: Path
    procs: list[Proc] = field(default_factory=list)
    web_port: int = 0
    # One for every unit, as latency.env is one file: the central units must open the central signing key
    # (probes.fleet.central) that any of them, or this process issuing a credential, made under it.
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))

    def unit(self, name: str) -> Unit:
        path = ROOT / "deploy" / (name.split("@")[0] + "@.service" if "@" in name else name)
        instance = name.split("@", 1)[1].removesuffix(".service") if "@" in name else None
        return read_unit(path, instance)

    def env(self, unit: Unit) -> dict[str, str]:
        env, source = unit.environment()
        for key in SERVICE_URLS:
            # The examples' URLs become the suite's services; a value the unit itself sets (the region
            # worker's unusable DATABASE_URL) stays as written.
            if key in env and source[key] != "unit":
                env[key] = self.pipeline.database_url if key == "DATABASE_URL" else self.pipeline.redis_url
        if "SECRET_KEY" in env:
            env["SECRET_KEY"] = self.secret_key
        if "LATENCY_REGION_KEY" in env:
            # The credential the admin would show once for the unit's region.
            env["LATENCY_REGION_KEY"] = self.pipeline.region_key(unit.instance)
        if "STATIC_ROOT" in env:
            env["STATIC_ROOT"] = str(self.static_root)
        if "UVICORN_PORT" in env:
            # The unit's port (8000) may be taken here: the web listens on a free one, still from the environment.
            self.web_port = free_port()
            env["UVICORN_PORT"] = str(self.web_port)
        env["LATENCY_CHANNEL_PREFIX"] = "latency-test"
        return env

    def base_env(self) -> dict[str, str]:
        return {**SYSTEMD_BASE_ENV, "HOME": str(self.tmp_path)}

    def argv(self, unit: Unit) -> list[str]:
        (argv,) = unit.commands()
        return argv

    def start(self, name: str) -> Proc:
        unit = self.unit(name)
        assert unit.value("Service", "WorkingDirectory") == "/opt/latency-atlas"
        log = self.tmp_path / f"{name}.log"
        proc = Proc([name], self.env(unit), log, argv=self.argv(unit), base_env=self.base_env())
        self.procs.append(proc)
        return proc

    def run_oneshot(self, name: str) -> list[str]:
        """Each ExecStart of a Type=oneshot unit in order, as systemd runs them; their output."""
        unit = self.unit(name)
        assert unit.oneshot
        outputs = []
        for argv in unit.commands():
            done = subprocess.run(
                argv,
                cwd=ROOT,
                env={**self.base_env(), **self.env(unit)},
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert done.returncode == 0, f"{argv[1:]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            outputs.append(done.stdout + done.stderr)
        return outputs

    def logs(self) -> str:
        return "\n".join(f"===== {p.args} =====\n{p.log()}" for p in self.procs)

    def close(self) -> None:
        for proc in self.procs:
            proc.stop()


@pytest.fixture
def deployment(pipeline, tmp_path, request, settings):
    d = Deployment(pipeline, tmp_path, tmp_path / "static")
    settings.SECRET_KEY = d.secret_key  # credentials issued here carry the central key the units sign with
    yield d
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        print(d.logs())
    d.close()


def get(port: int, path: str, **headers: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Host": SITE, **headers})
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


def sign_in(port: int, username: str, password: str) -> str:
    """The session cookie of a sign-in through the login form, as a browser behind the proxy makes it."""
    form = get(port, "/accounts/login/", **HTTPS)
    csrf = re.search(r"csrftoken=([^;]+)", form.getheader("Set-Cookie")).group(1)
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', form.body).group(1).decode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(
        "POST",
        "/accounts/login/",
        body=urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token}),
        headers={
            "Host": SITE,
            **HTTPS,
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={csrf}",
            "Origin": f"https://{SITE}",
            "Referer": f"https://{SITE}/accounts/login/",
        },
    )
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 302, response.status
    return re.search(r"sessionid=([^;]+)", response.getheader("Set-Cookie")).group(1)


def answers(port: int, path: str, **headers: str) -> http.client.HTTPResponse | None:
    try:
        return get(port, path, **headers)
    except OSError:
        return None


def pinged(pipeline, prefix: str) -> bool:
    replies = pipeline.app.control.ping(timeout=1.0)
    return any(name.startswith(prefix) for reply in replies for name in reply)


def stops_cleanly(proc: Proc) -> None:
    """SIGTERM, as `systemctl stop` sends it, and a clean exit: status 0. uvicorn re-raises the SIGTERM
    once it has shut down (so its status says what stopped it); systemd counts that death as a clean
    stop too (systemd.service(5), SuccessExitStatus=), so for it the log must show the shutdown finished."""
    status = proc.stop(timeout=90)  # SIGKILL (status -9) only when the wait runs out
    if status == -signal.SIGTERM:
        assert "Finished server process" in proc.log(), proc.log()
    else:
        assert status == 0, proc.log()


def running(proc: Proc) -> None:
    assert proc.popen.poll() is None, f"{proc.args} exited with {proc.popen.returncode}:\n{proc.log()}"


# --- one check per unit: start it, wait until it is up ---------------------------------------------


def web_is_up(d: Deployment, llm_probe) -> Proc:
    d.run_oneshot("latency-migrate.service")  # production serves collected static files only
    web = d.start("latency-web.service")

    def login_page():
        running(web)
        return answers(d.web_port, "/accounts/login/", **HTTPS)

    page = wait_for(login_page, 60, message="the login page over the TLS proxy's forwarded HTTPS")
    assert page.status == 200, page.body[:500]
    assert b"csrfmiddlewaretoken" in page.body
    # Plain HTTP (no X-Forwarded-Proto from the trusted proxy) is sent to HTTPS: the settings trust the
    # proxy named in LATENCY_TRUSTED_PROXIES and production redirects.
    plain = get(d.web_port, "/accounts/login/")
    assert plain.status == 301
    assert plain.getheader("Location") == f"https://{SITE}/accounts/login/"
    return web


def ingest_is_up(d: Deployment, llm_probe) -> Proc:
    ingest = d.start("latency-ingest.service")
    wait_for(lambda: running(ingest) or pinged(d.pipeline, "ingest@"), 60, message="the ingest worker's pong")
    return ingest


def region_is_up(d: Deployment, llm_probe) -> Proc:
    region = d.start(f"latency-region@{REGION}.service")
    # A region worker takes no remote control (no pong): its own lines say it is up.
    wait_for(
        lambda: running(region) or (" connected: " in region.log() and " ready." in region.log()),
        60,
        message="the region worker's connected and ready lines",
    )
    return region


def scheduler_is_up(d: Deployment, llm_probe) -> Proc:
    llm_probe(slug=REGION, interval=10)
    scheduler = d.start("latency-scheduler.service")
    wait_for(
        lambda: running(scheduler) or d.pipeline.queue_length(f"probes.{REGION}") > 0,
        60,
        message=f"a run queued on probes.{REGION}",
    )
    return scheduler


CHECKS = {
    "latency-web.service": web_is_up,
    "latency-ingest.service": ingest_is_up,
    "latency-region@.service": region_is_up,
    "latency-scheduler.service": scheduler_is_up,
}
LONG_RUNNING = [p.name for p in service_files() if not read_unit(p, REGION).oneshot]


def test_every_long_running_unit_has_a_start_check_here():
    assert sorted(LONG_RUNNING) == sorted(CHECKS)


@pytest.mark.parametrize("name", LONG_RUNNING)
def test_a_unit_starts_is_up_and_stops_cleanly_on_sigterm(deployment, llm_probe, name):
    proc = CHECKS[name](deployment, llm_probe)
    running(proc)
    stops_cleanly(proc)


def test_the_setup_unit_creates_migrates_and_collects_static_files(deployment):
    ensuredb, migrate, collectstatic = deployment.run_oneshot("latency-migrate.service")
    assert "exists" in ensuredb
    assert "No migrations to apply" in migrate  # the suite's database is migrated already
    assert "static files copied" in collectstatic
    assert (deployment.static_root / "staticfiles.json").exists()  # the manifest production serves from


def test_the_units_together_probe_store_and_serve_a_measurement(deployment, llm_probe):
    probe = llm_probe(slug=REGION, interval=10)
    web_is_up(deployment, llm_probe)
    for name in ("latency-ingest.service", f"latency-region@{REGION}.service", "latency-scheduler.service"):
        deployment.start(name)
    stored = wait_for(
        lambda: Measurement.objects.filter(probe=probe, region__slug=REGION, outcome="ok").first(),
        90,
        message="a measurement probed by the region unit and stored by the ingest unit",
    )
    # Signed in through the login form (the dashboard is private by default), the region's page ranks the
    # target it measured.
    from django.contrib.auth.models import User

    User.objects.create_user("deploy", password="a-long-test-password")
    session = sign_in(deployment.web_port, "deploy", "a-long-test-password")
    page = get(deployment.web_port, f"/regions/{REGION}/", **HTTPS, Cookie=f"sessionid={session}")
    assert page.status == 200, page.body[:500]
    assert probe.target.name.encode() in page.body
    assert stored.ttft_ms is not None
    for proc in deployment.procs:
        stops_cleanly(proc)
