"""Browser-test helpers: Debian's Chromium driven by Playwright, and the site served by a real uvicorn.

Nothing here downloads a browser: Playwright (pip, with its driver) launches /usr/bin/chromium, installed by
`apt-get install chromium` (.ci/run does it when missing). Never run `playwright install`.

Fixtures of the tests in this folder:

- `browser_page`: a fresh Chromium (its own user-data-dir) and one page. Every request URL the browser makes is
  recorded (`page.recorder.urls`; websockets in `page.recorder.websockets`, handshakes that completed in
  `page.recorder.websockets_open`), with failed requests, HTTP errors, console errors, uncaught exceptions and
  main-frame navigations. `@pytest.mark.browser_timezone("Asia/Kolkata")` sets the browser's time zone
  (else the machine's). At teardown a screenshot is saved to test-artifacts/<test name>.png, plus a .log of the
  recording when the test failed. Without /usr/bin/chromium the test is skipped, except in CI (CI set), where
  it fails.
- `asgi_server`: uvicorn serving latency.asgi:application from a subprocess, on the pytest test database (data
  must be committed: the fixture uses `transactional_db`) and the suite's test Redis database, with the same
  channel-layer prefix as this process, so probes.live.broadcast() here reaches the browsers there. Static files
  are collected (copied: a snapshot, safe from edits while it runs) into a temporary STATIC_ROOT once per
  session (`collected_static`), as `make demo` does. `@pytest.mark.asgi_env(NAME="value")` adds to the server's
  environment.

The plain parts (`launch_chromium()`, the page recorder, `UvicornServer`, `login()`, `wait_until()`) live in
devtools/harness.py, shared with bench/; this module keeps what is pytest-specific.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from devtools.harness import CHROMIUM, attach_recorder, launch_chromium

ROOT = Path(__file__).resolve().parents[2]  # the repository, above tests/browser/
ARTIFACTS = ROOT / "test-artifacts"


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
            problem = "the playwright package is not installed (make install: requirements/dev.txt)"
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"browser test cannot run in CI: {problem}", pytrace=False)
    pytest.skip(f"browser test skipped: {problem}")


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


@pytest.fixture
def browser_page(request, tmp_path):
    require_chromium()
    name = artifact_name(request.node.nodeid)
    zone = request.node.get_closest_marker("browser_timezone")
    with launch_chromium(tmp_path / "chromium-profile", timezone_id=zone.args[0] if zone else None) as context:
        page = context.pages[0] if context.pages else context.new_page()
        page.set_default_timeout(15_000)
        page.recorder = attach_recorder(page)
        page.artifact_name = name
        (ARTIFACTS / f"{name}.log").unlink(missing_ok=True)  # a recording left by an earlier failed run
        try:
            yield page
        finally:
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / f"{name}.png"
            try:
                page.screenshot(path=str(shot), full_page=True)
            except Exception as exc:
                shot = None
                print(f"browser_page: no screenshot: {exc}")
            rep = getattr(request.node, "rep_call", None)
            if rep is not None and rep.failed:
                log = ARTIFACTS / f"{name}.log"
                log.write_text(f"url: {page.url}\n{page.recorder.report()}\n")
                print(f"browser_page: recording in {log}")
                if shot is not None:
                    print(f"browser_page: screenshot in {shot}")


@pytest.fixture
def asgi_server(transactional_db, test_redis_url, settings, tmp_path, request, collected_static):
    """The site on a real uvicorn, reading the test database and sharing this process's channel layer;
    @pytest.mark.asgi_env(NAME="value") sets the server's settings, such as the demo's banner."""
    from tests.conftest import running_site

    yield from running_site(
        request, settings, test_redis_url, tmp_path, channel="browser", static_root=collected_static
    )
