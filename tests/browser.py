"""Browser-test helpers: Debian's Chromium driven by Playwright, and the site served by a real uvicorn.

Nothing here downloads a browser: Playwright (pip, with its driver) launches /usr/bin/chromium, installed by
`apt-get install chromium` (.ci/run does it when missing). Never run `playwright install`.

Fixtures (import them into the test module: `from tests.browser import browser_page, asgi_server`):

- `browser_page`: a fresh Chromium (its own user-data-dir) and one page. Every request URL the browser makes is
  recorded (`page.recorder.urls`; websockets in `page.recorder.websockets`, handshakes that completed in
  `page.recorder.websockets_open`), with failed requests, HTTP errors, console errors, uncaught exceptions and
  main-frame navigations. At teardown a screenshot is saved to test-artifacts/<test name>.png, plus a .log of the
  recording when the test failed. Without /usr/bin/chromium the test is skipped, except in CI (CI set), where
  it fails.
- `asgi_server`: uvicorn serving latency.asgi:application from a subprocess, on the pytest test database (data
  must be committed: the fixture uses `transactional_db`) and the suite's test Redis database, with the same
  channel-layer prefix as this process, so probes.live.broadcast() here reaches the browsers there. Static files
  are collected (copied: a snapshot, safe from edits while it runs) into a temporary STATIC_ROOT first, as
  `make demo` does.

`launch_chromium()` and `UvicornServer` are plain context managers, used by bench/dashboard.py too.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import wait_for

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
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


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_chromium() -> None:
    """Skip (or, in CI, fail) when the browser or Playwright is missing."""
    problem = None
    if not os.access(CHROMIUM, os.X_OK):
        problem = f"{CHROMIUM} is not installed (apt-get install chromium; .ci/run does it in CI)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "the playwright package is not installed (pip install -e '.[test]')"
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"browser test cannot run in CI: {problem}", pytrace=False)
    pytest.skip(f"browser test skipped: {problem}")


@contextlib.contextmanager
def launch_chromium(user_data_dir: str | Path | None = None) -> Iterator:
    """A Playwright BrowserContext of Debian's Chromium with a fresh profile (removed afterwards when the
    caller gave none)."""
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
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
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


def artifact_name(nodeid: str) -> str:
    """tests/test_x.py::test_y[a] -> test_x.test_y-a"""
    name = nodeid.split("/")[-1].replace(".py::", ".").replace("::", ".")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:150]


def snap(page, label: str) -> Path:
    """Save a screenshot of the page now: test-artifacts/<test name>-<label>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{getattr(page, 'artifact_name', 'page')}-{artifact_name(label)}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def wait_until(page, predicate, timeout: float, message: str, interval_ms: int = 50):
    """Poll a Python predicate while letting Playwright deliver its events (they arrive only while it waits)."""
    return wait_for(predicate, timeout, interval_ms / 1000, message, sleep=lambda s: page.wait_for_timeout(s * 1000))


@pytest.fixture
def browser_page(request, tmp_path):
    require_chromium()
    name = artifact_name(request.node.nodeid)
    with launch_chromium(tmp_path / "chromium-profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        page.set_default_timeout(15_000)
        page.recorder = attach_recorder(page)
        page.artifact_name = name
        (ARTIFACTS / f"{name}.log").unlink(missing_ok=True)  # a recording left by an earlier failed run
        try:
            yield page
        finally:
            ARTIFACTS.mkdir(exist_ok=True)
            try:
                page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
            except Exception as exc:  # noqa: BLE001 - a dead page must not hide the test's own failure
                print(f"browser_page: no screenshot: {exc}")
            rep = getattr(request.node, "rep_call", None)
            if rep is not None and rep.failed:
                log = ARTIFACTS / f"{name}.log"
                log.write_text(f"url: {page.url}\n{page.recorder.report()}\n")
                print(f"browser_page: recording in {log}")


# --- the site, served by uvicorn -----------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        # --no-proxy-headers: forwarding headers are Django's to judge (latency.proxy), as in production.
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


def channel_prefix() -> str:
    return os.environ.get("LATENCY_CHANNEL_PREFIX", "latency-test") + "-browser"


@pytest.fixture
def asgi_server(transactional_db, test_redis_url, settings, tmp_path, request):
    """The site on a real uvicorn, reading the test database and sharing this process's channel layer."""
    from channels.layers import channel_layers
    from django.db import connection

    from tests.conftest import _database_url

    prefix = channel_prefix()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [test_redis_url], "prefix": prefix},
        }
    }
    channel_layers.backends = {}
    env = {
        "DATABASE_URL": _database_url(dict(connection.settings_dict)),
        "REDIS_URL": test_redis_url,
        "LATENCY_CHANNEL_PREFIX": prefix,
        "DEBUG": "false",
        "LATENCY_PUBLIC_DASHBOARD": "false",
        "LATENCY_PRODUCTION": "false",
    }
    server = UvicornServer(env, tmp_path / "uvicorn.log")
    try:
        server.start()
        yield server
    finally:
        server.stop()
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            print(f"===== uvicorn log =====\n{server.log()}")
        channel_layers.backends = {}
