"""The harness shared by the test suite and the benchmarks: one way to run a `manage.py` command,
to build a benchmark's environment, to serve the site on a real uvicorn, and to drive Debian's
Chromium through Playwright.

Why here and not in tests/: bench/ scripts are not tests and must not import the test package;
both use these pieces, so they live once, in development tooling (never imported by the app).
tests/browser.py keeps what is pytest-specific (fixtures, skipping, screenshots).

Nothing here downloads a browser: Playwright (pip, with its driver) launches /usr/bin/chromium,
installed by `apt-get install chromium` (.ci/run does it when missing). Never run `playwright install`.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from devtools.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/latency"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class BenchError(Exception):
    """A benchmark (or harness step) cannot go on; the message says why."""


# --- processes and environments ---------------------------------------------------------------------


def manage(env: dict[str, str], *args: str, timeout: float = 600) -> str:
    """Run `manage.py ARGS` with env over ours; its stdout, or BenchError with the end of its output."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        check=False,
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise BenchError(
            f"manage.py {' '.join(args)} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}"
        )
    return proc.stdout.strip()


def database_url_for(db_name: str) -> str:
    """DATABASE_URL (or the default) naming database db_name instead."""
    parts = urlsplit(os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL)
    return urlunsplit((parts.scheme, parts.netloc, "/" + db_name, parts.query, ""))


def redis_url_for(redis_db: int) -> str:
    """REDIS_URL (or the default) naming Redis database redis_db instead (unix:// URLs carry it as ?db=)."""
    parts = urlsplit(os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL)
    if parts.scheme == "unix":
        query = dict(parse_qsl(parts.query))
        query["db"] = str(redis_db)
        return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
    return urlunsplit((parts.scheme, parts.netloc, f"/{redis_db}", parts.query, ""))


def bench_env(
    db_name: str, *, channel_prefix: str, redis_db: int | None = None, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """A benchmark's own database (and Redis database, when it uses one) on the configured servers.

    The bench drops, truncates or flushes what it is given, so the configured names themselves are refused.
    """
    if urlsplit(os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL).path.lstrip("/") == db_name:
        raise BenchError(f"DATABASE_URL already names {db_name!r}; the bench drops or reloads it: choose another")
    env = {
        "DATABASE_URL": database_url_for(db_name),
        "LATENCY_CHANNEL_PREFIX": channel_prefix,
        "DJANGO_SETTINGS_MODULE": "latency.settings",
        "PYTHONUNBUFFERED": "1",
    }
    if redis_db is not None:
        redis_url = redis_url_for(redis_db)
        base_redis = os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
        for configured in {base_redis, os.environ.get("CELERY_BROKER_URL") or base_redis}:
            if configured.rstrip("/") == redis_url.rstrip("/"):
                raise BenchError(
                    f"the configured Redis URL is already {redis_url}: the bench flushes that database; choose another"
                )
        # CELERY_BROKER_URL too: settings prefer it over REDIS_URL when set.
        env.update(REDIS_URL=redis_url, CELERY_BROKER_URL=redis_url)
    return {**env, **(extra or {})}


def ensure_day_partitions(low, high) -> None:
    """The day partitions of raw measurements for slots in [low, high), made before a bench loads rows with plain
    INSERTs, as the scheduler and ingest make them in production: rows of a day without its partition would all
    land in the default partition, and the bench would time a layout no deployment has (probes.partitions)."""
    from probes import partitions

    partitions.ensure_days(partitions.MEASUREMENTS, partitions.days_between(low, high))


def wait_for(predicate, timeout: float, interval: float = 0.2, message: str = "condition", sleep=time.sleep):
    """Poll until the predicate is true; `sleep` lets a caller wait its own
    way (a browser test must let Playwright deliver events meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {message}")
        sleep(interval)


# --- the machine, for benchmark reports ----------------------------------------------------------


def machine_context() -> dict:
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "nproc": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
        "loadavg": load,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_by_process() -> dict[tuple[int, str], float]:
    """User + system CPU seconds of every process, by (pid, command name), from /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw.rsplit(")", 1)[1].split()
        out[(int(entry), comm)] = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
    return out


def machine_ticks() -> tuple[int, int]:
    """(all, idle + iowait) jiffies since boot, from the first line of /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return sum(values), values[3] + values[4]


# --- the site, served by uvicorn ----------------------------------------------------------------


def uvicorn_command() -> list[str]:
    exe = Path(sys.executable).with_name("uvicorn")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "uvicorn"]


class UvicornServer:
    """`uvicorn latency.asgi:application` on a free port of 127.0.0.1, in its own process group."""

    def __init__(self, env: dict[str, str], log_path: Path, *, access_log: bool = True, collect_static: bool = True):
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_path)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
        self.access_log = access_log
        self.collect_static = collect_static
        self._static_dir: str | None = None
        self.popen: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> UvicornServer:
        self._log = open(self.log_path, "ab")
        if self.collect_static and "STATIC_ROOT" not in self.env:
            self._static_dir = tempfile.mkdtemp(prefix="latency-static-")
            self.env["STATIC_ROOT"] = self._static_dir
        if self.collect_static:
            subprocess.run(
                [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
                cwd=ROOT,
                env=self.env,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                check=True,
                timeout=120,
            )
        # --no-proxy-headers: forwarding headers are Django's to judge (probes.proxy), as in production.
        args = [
            *uvicorn_command(), "latency.asgi:application", "--host", "127.0.0.1", "--port", str(self.port),
            "--no-proxy-headers",
        ]  # fmt: skip
        if not self.access_log:
            args += ["--no-access-log", "--log-level", "warning"]
        self.popen = subprocess.Popen(
            args, cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.popen.poll() is not None:
                raise RuntimeError(f"uvicorn exited with {self.popen.returncode}:\n{self.log()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/accounts/login/")
                conn.getresponse().read()
                conn.close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn did not answer within {timeout:g} s:\n{self.log()}") from None
                time.sleep(0.1)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-8000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=10)
        if getattr(self, "_log", None) is not None:
            self._log.close()
        if self._static_dir:
            shutil.rmtree(self._static_dir, ignore_errors=True)

    def __enter__(self) -> UvicornServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- Chromium ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def launch_chromium(user_data_dir: str | Path | None = None, *, timezone_id: str | None = None) -> Iterator:
    """A Playwright BrowserContext of Debian's Chromium with a fresh profile (removed afterwards when the
    caller gave none); timezone_id (an IANA name) is the zone the pages see as the browser's own."""
    from playwright.sync_api import sync_playwright

    own_dir = user_data_dir is None
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-")) if own_dir else Path(user_data_dir)
    profile.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(profile),
                executable_path=CHROMIUM,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport=VIEWPORT,
                # Only the site under test is reached; a service worker could hide requests from the recorder.
                service_workers="block",
                timezone_id=timezone_id,
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        if own_dir:
            shutil.rmtree(profile, ignore_errors=True)


@dataclass
class Recorder:
    """What one page did on the network and in its console."""

    urls: list[str] = field(default_factory=list)
    websockets: list[str] = field(default_factory=list)
    websockets_open: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    http_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)

    def foreign(self, origin: str) -> list[str]:
        """Recorded URLs (requests and websockets) that are not the site's own origin, data: or blob:."""
        ws_origin = "ws" + origin[len("http") :] if origin.startswith("http") else origin
        own = (origin + "/", ws_origin + "/")
        return [
            u
            for u in [*self.urls, *self.websockets]
            if not (u.startswith(own) or u in (origin, ws_origin) or u.startswith(("data:", "blob:")))
        ]

    def report(self) -> str:
        parts = []
        for name in ("page_errors", "console_errors", "failed", "http_errors", "websockets", "navigations", "urls"):
            values = getattr(self, name)
            parts.append(f"== {name} ({len(values)})")
            parts.extend(f"   {v}" for v in values)
        return "\n".join(parts)


def attach_recorder(page) -> Recorder:
    """Record everything `page` (and its browser context) asks of the network. Uses a CDP session to see
    websocket handshakes complete, which Playwright's own events do not report."""
    rec = Recorder()
    context = page.context
    context.on("request", lambda r: rec.urls.append(r.url))
    context.on("requestfailed", lambda r: rec.failed.append(f"{r.method} {r.url}: {r.failure}"))

    def on_response(response) -> None:
        if response.status >= 400:
            rec.http_errors.append(f"{response.status} {response.request.method} {response.url}")

    context.on("response", on_response)
    page.on("websocket", lambda ws: rec.websockets.append(ws.url))
    page.on("console", lambda m: rec.console_errors.append(m.text) if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda exc: rec.page_errors.append(str(exc)))
    page.on("framenavigated", lambda f: rec.navigations.append(f.url) if f == page.main_frame else None)

    ws_urls: dict[str, str] = {}
    cdp = context.new_cdp_session(page)
    cdp.on("Network.webSocketCreated", lambda e: ws_urls.__setitem__(e["requestId"], e["url"]))

    def on_handshake(event) -> None:
        if event.get("response", {}).get("status") == 101:
            rec.websockets_open.append(ws_urls.get(event["requestId"], "?"))

    cdp.on("Network.webSocketHandshakeResponseReceived", on_handshake)
    cdp.send("Network.enable")
    return rec


def outside_browser_loop(fn, *args, **kwargs):
    """Call fn in a short-lived thread and return its result.

    Playwright's sync API keeps an asyncio loop marked as running in the calling thread, where Django's ORM
    refuses to run (SynchronousOnlyOperation) and async_to_sync (probes.live.broadcast) cannot either. The
    thread's database connection is closed afterwards, so nothing holds the test database open."""
    import threading

    from django.db import connections

    result: dict = {}

    def run() -> None:
        try:
            result["value"] = fn(*args, **kwargs)
        except BaseException as exc:
            result["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name="outside-browser-loop")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result.get("value")


def live_item(m) -> dict:
    """The broadcast item of a stored Measurement, shaped like probes.ingest._live_item."""
    from probes.ingest import LIVE_FIELDS

    item = {
        "id": m.id,
        "probe_id": m.probe_id,
        "target_id": m.target_id,
        "region_id": m.region_id,
        "started_at": m.started_at.isoformat(),
    }
    for name in LIVE_FIELDS:
        item[name] = getattr(m, name)
    return item


def login(page, origin: str, username: str, password: str) -> None:
    """Sign in through the login form, as a person would."""
    page.goto(f"{origin}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.locator("form:has(input[name=password]) [type=submit]").first.click()
    if "/accounts/login/" in page.url:
        raise AssertionError(f"still on the login page after signing in as {username!r}: {page.url}")


def wait_until(page, predicate, timeout: float, message: str, interval_ms: int = 50):
    """Poll a Python predicate while letting Playwright deliver its events (they arrive only while it waits)."""
    return wait_for(predicate, timeout, interval_ms / 1000, message, sleep=lambda s: page.wait_for_timeout(s * 1000))
