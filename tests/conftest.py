"""Shared pytest fixtures."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.conf import settings as django_settings

from devtools.geoip import demo_city_database
from devtools.mockllm import MockLLMServer, running_server
from latency.env import channel_layer

pytest_plugins = ["devtools.exit_watchdog"]

# Engines trust only CA bundles inside LATENCY_CA_DIR (probes.engine.envpolicy). The session has one such
# directory: the TLS mock servers make their CAs inside it, and the engines the tests build, the region workers
# and `manage.py probe` they start all inherit it. A test of other directories passes its own.
WORKER_CA_DIR = tempfile.mkdtemp(prefix="latency-test-ca-")
os.environ["LATENCY_CA_DIR"] = WORKER_CA_DIR
atexit.register(shutil.rmtree, WORKER_CA_DIR, ignore_errors=True)
# Real users are placed by the demo's packaged city database (production names its own): for every server the
# tests start, and for this process's settings, which pytest-django has read already. A test of the site without
# one overrides the setting.
os.environ["LATENCY_GEOIP_DATABASE"] = os.environ.get("LATENCY_GEOIP_DATABASE") or demo_city_database()
django_settings.LATENCY_GEOIP_DATABASE = os.environ["LATENCY_GEOIP_DATABASE"]
# Passwords hashed quickly in this process (tests/hashers.py); the production hasher is what the servers it starts
# use, and tests/web/test_passwords_are_hashed_by_the_production_hasher.py checks that setting.
django_settings.PASSWORD_HASHERS = ["tests.hashers.QuickPBKDF2PasswordHasher", *django_settings.PASSWORD_HASHERS]

if TYPE_CHECKING:
    from tests.support import Proc


TEMPLATE_PROCESS = pytest.StashKey[subprocess.Popen]()

# --- test layers (pyproject.toml markers; `make test-fast` runs what none of them marks) ---------------------

# By the folder under tests/ a test lives in.
FOLDER_MARKS = {
    "browser": ("browser",),
    "deploy": ("deploy",),
    "pipeline": ("e2e",),
    "regions": ("e2e",),
    # Builds a wheelhouse and installs a region host's venv from it.
    "regions_e2e": ("e2e", "slow"),
    # Bootstraps a Debian base, builds both images and runs containers of them (`make test-images`).
    "images": ("images", "e2e", "slow"),
}
# A fixture, a test function or a function of its module that it calls, naming one of these, starts processes of
# its own: a uvicorn (running_site, UvicornServer), Celery workers and the scheduler (Pipeline, the `pipeline`
# fixture), a manage.py command (Proc, subprocess with sys.executable), a tool.
PROCESS_STARTERS = frozenset({"running_site", "UvicornServer", "Pipeline", "Proc", "Popen", "subprocess", "executable"})
# A test function naming one of these migrates the test database.
MIGRATORS = frozenset({"MigrationExecutor"})


def _code_and_nested(code) -> Iterator:
    """A function's code and that of the functions defined inside it (a fixture's helper that it returns)."""
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            yield from _code_and_nested(const)


def _names_any(func, names: frozenset[str], depth: int = 1, *, helpers_from: str = "") -> bool:
    """Whether a function, a function defined in it, or (to `depth`) a function it calls names one of `names`: the
    functions of its own module, or of every module whose name starts with `helpers_from` when given."""
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    if any(not names.isdisjoint(c.co_names) for c in _code_and_nested(code)):
        return True
    if depth == 0:
        return False
    module = getattr(func, "__globals__", {})
    helpers = (module.get(name) for name in code.co_names)
    return any(
        _names_any(helper, names, depth - 1, helpers_from=helpers_from)
        for helper in helpers
        if callable(helper)
        and (
            getattr(helper, "__module__", None) == func.__module__
            or (helpers_from and str(getattr(helper, "__module__", "")).startswith(helpers_from))
        )
    )


def _names_a_process_starter(func) -> bool:
    return _names_any(func, PROCESS_STARTERS, helpers_from="tests.")


def layer_marks(item: pytest.Item) -> set[str]:
    """The layer markers a collected test gets from where it lives and what it uses."""
    marks: set[str] = set()
    parts = Path(str(item.path)).relative_to(Path(__file__).parent).parts
    if len(parts) > 1:
        marks.update(FOLDER_MARKS.get(parts[0], ()))
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    defs = fixtureinfo.name2fixturedefs.values() if fixtureinfo is not None else ()
    if any(_names_a_process_starter(d.func) for fixturedefs in defs for d in fixturedefs):
        marks.add("e2e")
    if _names_a_process_starter(getattr(item, "function", None)):
        marks.add("e2e")
    # A data migration's test migrates the test database back to before it and forward again: schema changes of
    # every table, and a flush of everything after.
    if _names_any(getattr(item, "function", None), MIGRATORS, helpers_from="tests."):
        marks.add("slow")
    return marks


# Folders whose tests share an expensive session fixture: under `--dist loadgroup` (make test) they run on one
# xdist worker, which builds it once (regions_e2e: the region host's venv, installed from a wheelhouse; images: the
# container images).
XDIST_GROUPS = {"regions_e2e", "images"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        present = {m.name for m in item.iter_markers()}
        for name in sorted(layer_marks(item) - present):
            item.add_marker(name)
        folder = Path(str(item.path)).relative_to(Path(__file__).parent).parts[0]
        if folder in XDIST_GROUPS:
            item.add_marker(pytest.mark.xdist_group(folder))


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_modify_db_settings):
    """pytest-django's fixture, except that xdist workers copy one template the run migrates once instead of each
    migrating a database of its own, and transactional tests end with DELETE rather than TRUNCATE (both in
    devtools/test_databases.py)."""
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    from devtools import test_databases

    workerinput = getattr(request.config, "workerinput", None)
    verbosity = request.config.option.verbose
    with django_db_blocker.unblock():
        if workerinput is None:
            old_config = setup_databases(verbosity=verbosity, interactive=False, aliases={"default"})
        else:
            run = os.environ.get(test_databases.RUN_VARIABLE) or workerinput["testrunuid"]
            old_config = test_databases.setup_worker_database(
                connections["default"], workerinput["workerid"], run, max(verbosity, 0)
            )
    ops = type(connections["default"].ops)
    original_flush = ops.sql_flush
    ops.sql_flush = test_databases.deleting_sql_flush(original_flush)
    yield
    ops.sql_flush = original_flush
    with django_db_blocker.unblock():
        teardown_databases(old_config, verbosity=verbosity)


def _xdist_controller(config) -> bool:
    return getattr(config, "workerinput", None) is None and bool(getattr(config.option, "numprocesses", None))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts the workers, which inherit the run's variable
def pytest_sessionstart(session):
    """The controller starts migrating the template its workers will copy (devtools/test_databases.py)."""
    if _xdist_controller(session.config):
        import uuid

        from devtools import test_databases

        os.environ[test_databases.RUN_VARIABLE] = uuid.uuid4().hex
        session.config.stash[TEMPLATE_PROCESS] = test_databases.start_template(
            {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "latency.settings")}
        )


def pytest_sessionfinish(session):
    """The controller drops the template its workers copied (they have all ended by now)."""
    if _xdist_controller(session.config):
        from django.conf import settings

        from devtools import test_databases

        process = session.config.stash.get(TEMPLATE_PROCESS, None)
        if process is not None:
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        test_databases.drop_template(settings.DATABASES["default"])


@pytest.fixture(autouse=True)
def _central_key_read_afresh():
    """A process reads the central signing key once (probes.fleet.central); each test's database starts
    without one, so this process must not go on signing with the key of a test before."""
    from probes.fleet import central

    central.forget()
    yield
    central.forget()


@pytest.fixture(autouse=True)
def _language_of_the_settings():
    """A request through LocaleMiddleware, or a test that turns Chinese on, leaves its language active in this
    thread; a test after it that renders without a request (the server error page) must not inherit it."""
    from django.conf import settings
    from django.utils import translation

    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(scope="session")
def worker_ca_dir() -> Path:
    """The session's LATENCY_CA_DIR: a CA bundle written here is one the engines may load, by its name."""
    return Path(WORKER_CA_DIR)


@pytest.fixture(scope="session")
def mockllm() -> Iterator[MockLLMServer]:
    """One plain-HTTP mock LLM server for the whole session (knobs are per request)."""
    with running_server() as server:
        yield server


@pytest.fixture(scope="session")
def mockllm_tls() -> Iterator[MockLLMServer]:
    """A mock LLM server behind TLS; trust server.ca_pem_path to reach server.base_url."""
    with running_server(tls=True, ca_dir=WORKER_CA_DIR) as server:
        yield server


@pytest.fixture(scope="session")
def mockllm_h2() -> Iterator[MockLLMServer]:
    """A TLS mock LLM server that offers h2 by ALPN and speaks HTTP/2 to clients that pick it."""
    with running_server(tls=True, http2=True, ca_dir=WORKER_CA_DIR) as server:
        yield server


# The factories of tests/factories.py as fixtures, for tests that ask for
# them by name: each takes keyword overrides.


@pytest.fixture
def make_region(db):
    from tests.factories import RegionFactory

    return RegionFactory


@pytest.fixture
def make_target(db):
    from tests.factories import TargetFactory

    return TargetFactory


@pytest.fixture
def make_probe(db):
    """regions=[...] to run from; a fresh test region when omitted."""
    from tests.factories import ProbeFactory

    return ProbeFactory


# --- engine helpers -------------------------------------------------------

STYLE_PATHS = {
    "openai": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/mock-model:streamGenerateContent",
    "http": "/health",
}


@pytest.fixture
def probe_url():
    """URL of the mock server for a style, knobs in the query string. Plain
    servers are reached as `localhost` so a DNS phase happens too."""

    def build(server, style: str = "openai", **knobs) -> str:
        base = server.base_url.replace("127.0.0.1", "localhost")
        query = "&".join(f"{k}={v}" for k, v in knobs.items())
        return base + STYLE_PATHS[style] + (("?" + query) if query else "")

    return build


@pytest.fixture
def measure():
    """Run the engine once (in a fresh event loop) and return the Measurement."""
    import asyncio

    from probes.engine import Engine, ProbeSpec

    def run(url: str, style: str = "openai", server=None, **overrides):
        spec_args = {"url": url, "style": style, "model": "mock-model", "timeout_s": 10.0}
        if server is not None and server.ca_pem_path:
            spec_args["ca_bundle"] = server.ca_pem_path
        spec_args.update(overrides)
        spec = ProbeSpec(**spec_args)

        async def go():
            engine = Engine()
            try:
                return await engine.measure(spec)
            finally:
                await engine.aclose()

        return asyncio.run(go())

    return run


@pytest.fixture(params=["plain", "tls"])
def server(request, mockllm, mockllm_tls):
    """Each engine test runs against the plain and the TLS mock server."""
    return mockllm if request.param == "plain" else mockllm_tls


# --- the pipeline: real Redis broker, real Postgres, real worker processes --

from urllib.parse import quote  # noqa: E402

# The channel-layer prefix of the processes the tests start (one per xdist worker: devtools/pytest_workers.py).
CHANNEL_PREFIX = os.environ.get("LATENCY_CHANNEL_PREFIX") or "latency-test"


@pytest.fixture(scope="session")
def test_redis_url():
    """The suite's own Redis database, flushed by each pipeline test: only one named for the
    tests (`make test` embeds one when LATENCY_TEST_REDIS_URL is not given)."""
    url = os.environ.get("LATENCY_TEST_REDIS_URL")
    if not url:
        pytest.fail("LATENCY_TEST_REDIS_URL is not set: run the suite with `make test`, which embeds a Redis for it")
    return url


def _database_url(settings_dict: dict, host: str | None = None, port: int | None = None) -> str:
    user = quote(settings_dict.get("USER") or "")
    password = quote(settings_dict.get("PASSWORD") or "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    h = host or settings_dict.get("HOST") or ""
    p = port or settings_dict.get("PORT") or ""
    if h.startswith("/"):
        return f"postgres://{auth}/{settings_dict['NAME']}?host={quote(h)}" + (f"&port={p}" if p else "")
    return f"postgres://{auth}{h}{':' + str(p) if p else ''}/{settings_dict['NAME']}"


def running_site(
    request,
    settings,
    test_redis_url: str,
    tmp_path,
    *,
    channel: str,
    collect_static: bool = True,
    static_root: Path | None = None,
):
    """The site on a real uvicorn over the test database, sharing this process's channel layer (under the prefix
    `<LATENCY_CHANNEL_PREFIX>-<channel>`). `@pytest.mark.asgi_env(NAME="value")` on a test adds to the server's
    environment; a failed test prints the server's log. A generator, for fixtures to `yield from`. static_root:
    static files collected already (the `collected_static` fixture), served instead of collecting them again."""
    from channels.layers import channel_layers
    from django.db import connection

    from devtools.harness import UvicornServer

    prefix = f"{CHANNEL_PREFIX}-{channel}"
    settings.CHANNEL_LAYERS = {"default": channel_layer(test_redis_url, prefix)}
    channel_layers.backends = {}
    env = {
        "DATABASE_URL": _database_url(dict(connection.settings_dict)),
        "REDIS_URL": test_redis_url,
        "LATENCY_CHANNEL_PREFIX": prefix,
        "DEBUG": "false",
        "LATENCY_PUBLIC_DASHBOARD": "false",
        "LATENCY_PRODUCTION": "false",
    }
    if static_root is not None:
        env["STATIC_ROOT"] = str(static_root)
        collect_static = False
    marker = request.node.get_closest_marker("asgi_env")
    if marker is not None:
        env.update(marker.kwargs)
    server = UvicornServer(env, tmp_path / "uvicorn.log", collect_static=collect_static)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            print(f"===== uvicorn log =====\n{server.log()}")
        channel_layers.backends = {}


@pytest.fixture(scope="session")
def collected_static(tmp_path_factory) -> Path:
    """`collectstatic` once for the session (a copy: a snapshot, safe from edits while the suite runs), for the
    sites the tests start to serve: collecting again for each one cost seconds a test."""
    import subprocess
    import sys

    from tests.support import ROOT

    root = tmp_path_factory.mktemp("static")
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env={**os.environ, "STATIC_ROOT": str(root)},
        check=True,
        timeout=300,
    )
    return root


class Pipeline:
    def __init__(self, tmp_path, redis_url: str) -> None:
        import redis as redis_lib
        from celery import Celery
        from django.conf import settings
        from django.db import connection

        self.tmp_path = tmp_path
        self.redis_url = redis_url
        self.redis = redis_lib.Redis.from_url(redis_url)
        self.redis.flushdb()
        self.db_settings = dict(connection.settings_dict)
        self.database_url = _database_url(self.db_settings)
        self.app = Celery("latency-tests", broker=redis_url)
        self.app.conf.update(
            task_serializer="json",
            accept_content=["json"],
            broker_transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        )
        self.procs = []
        # Region workers, which start_scheduler lets come up first.
        self.region_workers: list[Proc] = []

    def env(self, **extra) -> dict[str, str]:
        env = {
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "LATENCY_CHANNEL_PREFIX": CHANNEL_PREFIX,
            "LATENCY_VISIBILITY_TIMEOUT": "4",
        }
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def start(self, *args: str, **env) -> Proc:
        from tests.support import Proc

        name = "-".join(a.strip("-") for a in args)[:60].replace("/", "_").replace(",", "_")
        proc = Proc(list(args), self.env(**env), self.tmp_path / f"{name}-{len(self.procs)}.log")
        self.procs.append(proc)
        return proc

    def region_key(self, slug: str) -> str:
        """A fresh credential for the region (created when the test has not made it)."""
        from probes.fleet.keys import issue_key
        from probes.models import Region
        from tests.factories import RegionFactory

        region = Region.objects.filter(slug=slug).first() or RegionFactory(slug=slug, name=slug)
        return issue_key(region, note="tests").credential

    def start_region(self, slug: str, *, hello_timeout: float = 0, **env) -> Proc:
        """`manage.py region_worker` for one region or several (comma separated), each with a fresh
        credential. By default it does not wait for the central site's first answer (tests/regions
        does): the pipeline tests time their slots from the worker's start, as before."""
        from probes.worker.config import key_variable

        # A region worker gets a database URL that cannot work: it must not need one.
        env.setdefault("DATABASE_URL", "postgres://nobody@127.0.0.1:1/no_database_here")
        slugs = slug.split(",")
        if "LATENCY_REGION_KEY" not in env:
            for one in slugs:
                env.setdefault(key_variable(one) if len(slugs) > 1 else "LATENCY_REGION_KEY", self.region_key(one))
        proc = self.start(
            "region_worker", "--region", slug, "--concurrency", "20", "--hello-timeout", str(hello_timeout), **env
        )
        self.region_workers.append(proc)
        return proc

    def start_ingest(self, **env) -> Proc:
        return self.start("ingest_worker", **env)

    def start_scheduler(self, **env) -> Proc:
        """`manage.py scheduler`, once the region workers started so far are consuming (or have exited). The
        scheduler publishes the slot under way at once, which may have begun almost an interval before; a worker
        still starting up took it too late, skipped it as stale, and the test waited a whole interval for the
        next slot."""
        from tests.support import wait_for

        for proc in self.region_workers:
            wait_for(
                # The whole log: a worker that has run for a while has logged past what log() returns.
                lambda proc=proc: b" ready." in proc.log_path.read_bytes() or proc.popen.poll() is not None,
                120,
                message=f"{proc.args[0]} to be ready before the scheduler starts",
            )
        return self.start("scheduler", **env)

    def queue_length(self, name: str) -> int:
        return self.redis.llen(name)

    def logs(self) -> str:
        return "\n".join(f"===== {p.args} =====\n{p.log()}" for p in self.procs)

    def close(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.stop()
        self.app.close()


@pytest.fixture
def pipeline(transactional_db, test_redis_url, tmp_path, settings, request):
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {"default": channel_layer(test_redis_url, CHANNEL_PREFIX)}
    channel_layers.backends = {}
    p = Pipeline(tmp_path, test_redis_url)
    yield p
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        print(p.logs())
    p.close()
    channel_layers.backends = {}


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    setattr(item, "rep_" + rep.when, rep)
    return rep


@pytest.fixture
def llm_probe(make_region, make_target, make_probe, mockllm):
    """A probe of the mock server's OpenAI endpoint in one fresh region."""

    def make(slug="test-lagos", interval=10, timeout=5.0, **knobs):
        region = make_region(slug=slug, name=slug)
        query = "&".join(f"{k}={v}" for k, v in {"tokens": 5, "gap_ms": 2, **knobs}.items())
        target = make_target(
            url=f"{mockllm.base_url}/v1/chat/completions?{query}", api_style="openai", model="mock-model"
        )
        return make_probe(target=target, regions=[region], interval_seconds=interval, timeout_seconds=timeout)

    return make


from tests.support import NOW_HOUR  # noqa: E402  (the `now` fixture's hour, shared with shared_rows)


@pytest.fixture
def now() -> Iterator[datetime]:
    """A fixed moment of the day, 00:30 UTC of the latest day that has had it, with the clock moved there and
    ticking for the test.

    Rollup and window tests reason about which hour and which day is the current one: at a fixed moment of the
    day they pass or fail the same way whenever they run, and a failure is reproduced by running the test again.
    From :30 the clock needs half an hour to leave its hour, so no test waits for a safe moment. The clock is
    moved rather than `now` passed in because the code under test reads it in several layers (rebuild_hour's
    marks, the rollup command, ingest), and a moved clock reaches them all. The moment is in the real past, so
    rows written relative to it are never ahead of the database's own clock, which is not moved.
    tests/readings/test_windows_read_the_same_at_every_hour_of_the_day.py runs the window tests at 00:30, 12:30
    and 23:30."""
    from tests.support import clock_at_half_past

    with clock_at_half_past(NOW_HOUR) as moment:
        yield moment


@pytest.fixture
def test_broker(test_redis_url, settings):
    """The project's Celery app (latency.celery.app) pointed at the suite's own
    Redis database for the test, then pointed back.

    The app is configured with namespace="CELERY", so it reads
    CELERY_BROKER_URL from the Django settings before any app.conf.broker_url
    change: the setting is what must be overridden. The app also caches its
    connection and producer pools for the broker it first used, so its
    references to both are dropped on the way in and out. They are not
    closed: kombu shares pools per broker URL across every app in the process
    (pipeline.app uses the same one), and a closed one would break them."""
    import redis
    from kombu import Connection

    from latency.celery import app

    def drop_pools():
        app._pool = None
        app.amqp._producer_pool = None

    r = redis.Redis.from_url(test_redis_url)
    r.flushdb()
    drop_pools()
    settings.CELERY_BROKER_URL = test_redis_url
    # Never publish to the real broker by accident.
    assert app.pool.connection.as_uri() == Connection(test_redis_url).as_uri()
    try:
        yield r
    finally:
        drop_pools()
        r.close()


# --- a region host's venv -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def region_host_venv(tmp_path_factory) -> Path:
    """A venv as a region host installs it (requirements/worker.txt, then the checkout's wheel with --no-deps), from a
    wheelhouse built offline from the checkout and this environment (devtools/wheelhouse.py): no test needs the
    network. Built once per run: under pytest-xdist the workers share the run's temporary root, and the first to
    get here builds it for all of them."""
    import fcntl

    from devtools import wheelhouse

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    built = shared / "region-host-venv"
    with open(shared / "region-host.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (built / "ready").exists():
            shutil.rmtree(built, ignore_errors=True)
            wheelhouse.worker_venv(built / "venv", wheelhouse.build(built / "wheelhouse"))
            (built / "ready").touch()
    return built / "venv"


# --- notification receivers (devtools/receivers.py): real sockets on loopback ---


@pytest.fixture
def json_receiver():
    """A JSON webhook receiver; `json_receiver.apprise_url("/path")` is the channel URL to it."""
    from devtools.receivers import JsonReceiver

    with JsonReceiver() as receiver:
        yield receiver


@pytest.fixture
def smtp_receiver():
    """A plain SMTP server (aiosmtpd); `smtp_receiver.apprise_url(to=...)` is the channel URL to it."""
    from devtools.receivers import SmtpReceiver

    with SmtpReceiver() as receiver:
        yield receiver
