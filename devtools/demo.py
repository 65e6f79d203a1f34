"""`make demo` (`python -m devtools.demo`): everything the demo runs, supervised, in one command.

Development tooling, not app code: it starts embedded PostgreSQL and Redis (devtools/embedded.py)
unless DATABASE_URL / REDIS_URL are set, and the mock LLM server (devtools/mockllm) the demo targets
point at. The services start BEFORE Django reads its settings, so Django is configured once with
their URLs (nothing re-points its connections afterwards). Then migrations, demo targets and probes
(devtools/demo_seed.py, given the mock server's URL, whose port the state folder keeps from run to run),
the admin user, static files, a week of history with two past incidents (devtools/demo_history.py, while
the web server starts; "ready" waits for it), the live incident's knobs, and the processes: ingest worker,
one region worker for every demo region, scheduler and the ASGI server.
Ctrl-C (SIGINT) or SIGTERM stops them all, services last; a child that dies stops the rest. Each
child asks the kernel to signal it if we die, so not even a SIGKILL of this process leaves one behind.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from devtools import embedded
from devtools.geoip import demo_city_database

ROOT = Path(__file__).resolve().parent.parent
STOP_GRACE_S = 30  # celery finishes running probes (timeout 8 s) and hands them to ingest
MOCK_HOST = "127.0.0.1"
MOCK_PORT_FILE = "mockllm-port"  # in the state folder


def mock_port(state: Path) -> tuple[int, int | None]:
    """(port, replaced): the mock LLM server's port for this state folder.

    The demo targets point at the mock by port, and so may targets an operator adds by hand: the port
    chosen on the first run is remembered in the state folder and used again while it is free. When it
    is taken, a new one is chosen and remembered, and `replaced` is the old one (else None)."""
    path = state / MOCK_PORT_FILE
    try:
        previous: int | None = int(path.read_text().strip())
    except (OSError, ValueError):
        previous = None
    if previous is not None and not 1 <= previous <= 65535:
        previous = None
    if previous is not None and not embedded.port_in_use(MOCK_HOST, previous):
        return previous, None
    port = embedded.free_port(MOCK_HOST)
    path.write_text(f"{port}\n")
    return port, previous


class CommandError(Exception):
    """A refusal an operator can act on: printed, exit status 1, no traceback."""


class _Stop(Exception):
    """Raised from the signal handler to leave start-up or supervision, whatever it is doing."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.demo",
        description="Start the whole demo (services, workers, scheduler, web) and stop it all on Ctrl-C.",
    )
    parser.add_argument(
        "--state", default=str(ROOT / "var" / "demo"), help="folder for all demo state (default ./var/demo)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--regions", type=int, default=0, help="how many regions to probe from (default all)")
    return parser.parse_args(argv)


class Demo:
    # --- output ---

    def write(self, text: str = "") -> None:
        print(text, flush=True)

    def say(self, status: str, text: str) -> None:
        self.write(f"[{status}] {text}")

    def step(self, text: str, fn, *args, **kwargs):
        started = time.monotonic()
        try:
            result = fn(*args, **kwargs)
        except (_Stop, KeyboardInterrupt):
            raise
        except Exception as exc:
            self.say("failed", f"{text}: {exc}")
            raise _Failed from None
        detail = result if isinstance(result, str) else ""
        self.say("ok", f"{text}{(': ' + detail) if detail else ''} ({time.monotonic() - started:.1f} s)")
        return result

    # --- main ---

    def run(self, opts: dict) -> int:
        self.state = Path(opts["state"]).resolve()
        self.host, self.port = opts["host"], opts["port"]
        self.children: list[tuple[str, subprocess.Popen, Path]] = []
        self.services = None
        self.t0 = time.monotonic()
        if not 1 <= self.port <= 65535:
            raise CommandError("--port must be between 1 and 65535")
        if embedded.port_in_use(self.host, self.port):
            raise CommandError(
                f"port {self.port} on {self.host} is already in use (an earlier demo still running?). "
                f"Stop it, or choose another port: make demo PORT=8001 / python -m devtools.demo --port 8001"
            )

        def on_signal(signum, frame):
            raise _Stop(signal.Signals(signum).name)

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        code = 0
        try:
            self.start(opts)
            self.supervise()
        except _Stop as stop:
            self.write()
            self.say("..", f"{stop.args[0] if stop.args else 'stop'} received: stopping everything")
        except _Failed:
            code = 1
        except embedded.EmbeddedError as exc:
            self.say("failed", str(exc))
            code = 1
        except _ChildDied as exc:
            self.say("failed", str(exc))
            code = 1
        finally:
            # A second Ctrl-C must not interrupt the shutdown half way and leave processes behind.
            for s in previous:
                signal.signal(s, signal.SIG_IGN)
            self.shutdown()
            for s, handler in previous.items():
                signal.signal(s, handler)
        return code

    def start(self, opts) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        (self.state / "logs").mkdir(exist_ok=True)
        database_url = os.environ.get("DATABASE_URL") or None
        redis_url = os.environ.get("REDIS_URL") or None
        self.services = embedded.Services(self.state, database_url=database_url, redis_url=redis_url)
        self.step(f"state folder {self.state}", self.services.lock.acquire)

        pg_label = "PostgreSQL (embedded)" if self.services.postgres else "PostgreSQL (DATABASE_URL)"
        db_url = self.step(pg_label, self.services.start_postgres)
        redis_label = "Redis (embedded)" if self.services.redis else "Redis (REDIS_URL)"
        self.step(redis_label, self.services.start_redis)
        for service in self.services.embedded:
            for note in service.notes:
                self.say("ok", note)
        self.redis_url = self.services.redis_url
        self.database_url = db_url
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "STATIC_ROOT": str(self.state / "static"),
            # Every region runs on this machine: pages say the geography is emulated.
            "LATENCY_EMULATED_GEOGRAPHY": "true",
            # The demo's real users come from made-up addresses: the packaged 2018 city database places them,
            # unless the operator named another.
            "LATENCY_GEOIP_DATABASE": os.environ.get("LATENCY_GEOIP_DATABASE") or demo_city_database(),
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("CELERY_BROKER_URL", None)
        # Django is configured only now, once, with the services' URLs: this process's own
        # steps (migrations, seeding, admin user) and every child read the same environment.
        os.environ.update(env)
        self.env = dict(os.environ)
        port, replaced = mock_port(self.state)
        if replaced is None:
            self.say("ok", f"mock LLM port {port}, the same on every run of {self.state}")
        else:
            self.say(
                "..",
                f"mock LLM port {replaced} of the previous runs is in use: moved to {port} (the demo targets "
                "follow; change the URL of any target you added by hand for the mock)",
            )
        # The address the demo targets use (localhost: their probes time a DNS phase too).
        self.mock_url = f"http://localhost:{port}"
        self.write_manifest()

        # The mock server needs no database: start it while Django sets up and migrations run.
        self.spawn("mockllm", ["-m", "devtools.mockllm", "--host", MOCK_HOST, "--port", str(port)], manage=False)
        self.step("database migrations", self._migrate)
        from devtools.demo_seed import DEMO_CITIES, DEMO_REGIONAL_RULE_NAME, demo_regions, seed

        regions = demo_regions(opts["regions"] or None)
        if not regions:
            self.say("failed", "no active regions in the database")
            raise _Failed
        slugs = [r.slug for r in regions]
        self.step(f"mock LLM server on {MOCK_HOST}:{port}", self._wait_port, "mockllm", port)
        from datetime import UTC, datetime

        from devtools.demo_seed import WORKLOAD_TARGET, live_incident

        probes = self.step("demo targets and probes", lambda: seed(self.mock_url, regions))
        targets = len({p.target_id for p in probes})
        self.say(
            "ok",
            f"{targets} targets, probed every 10 s from {len(slugs)} regions; {WORKLOAD_TARGET} also with a "
            "10k-token prompt and a cached pair (its page's Workloads)",
        )
        from devtools.demo_seed import seed_objectives

        # Current before the history loads, so the count after it (probes.slos.counting) counts its rows.
        objectives = self.step("demo objectives", seed_objectives, regions)
        self.say("ok", f"{len(objectives)} objectives (/slos/)")
        from devtools.demo_seed import seed_real_users

        added = self.step("demo real users (the map's real-user layer)", seed_real_users)
        self.say("ok", f"{added} real users' calls added from {len(DEMO_CITIES)} cities")
        self.login = self.step("admin user", self._superuser)
        self.step("static files", self._collectstatic)

        keys = self.step(f"credentials for {len(slugs)} regions", self._region_keys, regions)
        # The web server starts while the history loads (its start is mostly imports); the scheduler only after it.
        self.spawn_web()
        # Before the scheduler runs: the evaluator's passes over the staged incidents' past hours must not
        # interleave with its live passes, and live rows begin where history ends.
        self.step("history", self._history, datetime.now(UTC))
        # Timed from the end of the history, so it opens a few minutes after the demo is ready.
        incident = live_incident(datetime.now(UTC), regions)
        seed(self.mock_url, regions, incident)
        if incident is not None:
            self.say(
                "ok",
                f"live incident: {incident.target} answers slowly for {incident.region} from "
                f"{incident.starts:%H:%M:%S} to {incident.ends:%H:%M:%S} UTC; the rule "
                f'"{DEMO_REGIONAL_RULE_NAME}" opens an incident a few minutes after it starts',
            )
        self.spawn("ingest_worker", ["ingest_worker", "--loglevel", "WARNING"])
        self.spawn(
            "region_worker",
            env=keys,
            args=[
                "region_worker",
                "--region",
                ",".join(slugs),
                "--concurrency",
                str(max(20, 10 * len(slugs))),
                "--loglevel",
                "WARNING",
            ],
        )
        self.spawn("scheduler", ["scheduler", "--loglevel", "WARNING"])
        self.say("ok", f"ingest worker, region worker ({len(slugs)} regions), scheduler started")
        self.step(f"web server on {self.host}:{self.port}", self._wait_port, "web", self.port, self.host, 60)
        self.write_manifest(children={name: p.pid for name, p, _ in self.children})
        self.write()
        self.say("ok", f"ready in {time.monotonic() - self.t0:.1f} s; logs in {self.state / 'logs'}")
        self.write(f"\n    Latency Atlas: http://{self.host}:{self.port}/")
        self.write(f"    login: {self.login}\n")
        self.write("    Ctrl-C stops everything.\n")

    def spawn_web(self) -> None:
        self.spawn(
            "web",
            [
                "-m",
                "uvicorn",
                "latency.asgi:application",
                "--host",
                self.host,
                "--port",
                str(self.port),
                "--no-access-log",
                "--no-proxy-headers",
            ],
            manage=False,
        )

    def write_manifest(self, **extra) -> None:
        """services.json: every URL of the running demo (and the processes' ids once they run)."""
        self.services.write_manifest(web_url=f"http://{self.host}:{self.port}/", mockllm_url=self.mock_url, **extra)

    # --- steps ---

    @staticmethod
    def _setup_django() -> None:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")
        django.setup()

    @staticmethod
    def _call(name: str, **options) -> None:
        from django.core.management import call_command

        call_command(name, **options)

    def _migrate(self) -> None:
        self._setup_django()
        if self.services.postgres is None:
            # A server of the operator's: create the database if it lacks it.
            self._call("ensuredb", verbosity=0)
        self._call("migrate", interactive=False, verbosity=0)

    @staticmethod
    def _region_keys(regions) -> dict[str, str]:
        """A new credential per demo region, for the one region worker process: the environment it
        reads them from (LATENCY_REGION_KEY_<SLUG>). Earlier runs' keys end at once (overlap 0): the
        demo's worker is the only holder, and the previous one stopped with the previous run."""
        from datetime import timedelta

        from probes.fleet.keys import issue_key
        from probes.worker.config import key_variable

        return {
            key_variable(region.slug): issue_key(region, overlap=timedelta(0), note="make demo").credential
            for region in regions
        }

    @staticmethod
    def _history(started) -> str:
        from devtools.demo_history import HISTORY_DAYS, HISTORY_STEP_S, load_history

        loaded = load_history(started)
        if not loaded.rows:
            return "up to date"
        staged = "; ".join(
            f"{i.kind} incident {i.target} from {i.region} {s:%a %H:%M}-{e:%H:%M} UTC" for i, s, e in loaded.incidents
        )
        return (
            f"{loaded.rows} calls ({loaded.series} target x region series, one call every {HISTORY_STEP_S} s, "
            f"{HISTORY_DAYS} days at most) since {loaded.since:%Y-%m-%d %H:%M} UTC, {loaded.hours} hours rolled up"
            + (f"; staged: {staged}; {loaded.opened} incidents recorded by the alert evaluator" if staged else "")
            + " ("
            + ", ".join(f"{step} in {seconds:.1f} s" for step, seconds in loaded.timings.items())
            + ")"
        )

    def _collectstatic(self) -> None:
        self._call("collectstatic", interactive=False, verbosity=0)

    def _superuser(self) -> str:
        from django.contrib.auth import get_user_model

        User = get_user_model()
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME") or "admin"
        given = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        pw_file = self.state / "admin-password"
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is None:
            user = User(**{User.USERNAME_FIELD: username}, is_staff=True, is_superuser=True)
            password = given or self._generated_password(pw_file)
            user.set_password(password)
            user.save()
            shown = "(from DJANGO_SUPERUSER_PASSWORD)" if given else password
            return f"{username} / {shown}"
        if given:
            user.set_password(given)
            user.is_staff = user.is_superuser = True
            user.save()
            return f"{username} / (from DJANGO_SUPERUSER_PASSWORD)"
        stored = pw_file.read_text().strip() if pw_file.exists() else ""
        if stored and user.check_password(stored):
            return f"{username} / {stored}"
        return f"{username} / (password unchanged: set by you; manage.py changepassword {username})"

    @staticmethod
    def _generated_password(path: Path) -> str:
        password = secrets.token_urlsafe(12)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(password + "\n")
        return password

    def _wait_port(self, name: str, port: int, host: str = "127.0.0.1", timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_children()
            try:
                with socket.create_connection((host, port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{name} did not listen on {host}:{port} within {timeout:.0f} s; see its log")

    # --- children ---

    def spawn(self, name: str, args: list[str], manage: bool = True, env: dict[str, str] | None = None) -> None:
        log_path = self.state / "logs" / f"{name}.log"
        log = open(log_path, "ab")
        argv = [sys.executable, *(["manage.py"] if manage else []), *args]
        popen = subprocess.Popen(
            argv,
            cwd=ROOT,
            # Extra variables (the region credentials) for this child only, never in os.environ.
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Own session: a terminal's Ctrl-C reaches only us, and we stop children in order.
            start_new_session=True,
            preexec_fn=embedded.child_preexec(signal.SIGTERM),
        )
        log.close()
        self.children.append((name, popen, log_path))

    def check_children(self) -> None:
        for name, popen, log_path in self.children:
            code = popen.poll()
            if code is not None:
                tail = embedded._log_tail(log_path, 12)
                raise _ChildDied(f"{name} exited with status {code}; last lines of {log_path}:\n{tail}")

    def supervise(self) -> None:
        while True:
            self.check_children()
            time.sleep(0.5)

    def shutdown(self) -> None:
        started = time.monotonic()
        running = [(n, p) for n, p, _ in self.children if p.poll() is None]
        for _, popen in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for name, popen in running:
            try:
                popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say("..", f"{name} did not stop in {STOP_GRACE_S} s: killing it")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(popen.pid, signal.SIGKILL)
                popen.wait(timeout=10)
            # Also reap anything the child left in its process group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
        if running:
            self.say("ok", f"stopped {len(running)} processes ({time.monotonic() - started:.1f} s)")
        if self.services is not None:
            names = [s.name for s in self.services.embedded if s.popen is not None]
            self.services.stop()
            if names:
                self.say("ok", f"stopped embedded {' and '.join(names)}")


class _Failed(Exception):
    """A step failed and said why."""


class _ChildDied(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    opts = vars(parse_args(argv))
    try:
        return Demo().run(opts)
    except CommandError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
