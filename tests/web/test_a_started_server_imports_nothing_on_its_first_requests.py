"""The web process does at its start what a first request would otherwise do
lazily (latency.startup, run by the ASGI lifespan protocol before uvicorn
listens): after it, the first dashboard and objective requests of a fresh
process, in either language, import no module and build no URL resolver's
tables (the root's, each language's and each namespace's, {% url 'admin:...' %}),
and the start itself read no measurement and filled no merge cache, so the
first request still reads its own data; and the objects it made are frozen
out of the garbage collector's full collections.

Method: a fresh Python process per case imports latency.asgi as uvicorn
does, runs the lifespan start-up (or, the control, skips it), then sends its
first requests through the ASGI application and reports the modules each
one imported and the SQL the start-up ran. Counting modules, not timing, so
the check holds on a loaded machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from tests.conftest import _database_url
from tests.factories import ServiceLevelObjectiveFactory, spread_measurements
from tests.slos_pages.conftest import counted

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]

FIRST_REQUESTS = r"""
import asyncio, gc, json, sys

import httpx
from django.db.backends.signals import connection_created
from django.urls.resolvers import URLResolver

from latency.asgi import application
from probes.readings.cache import merge_cache

WATCHED = ("latency", "probes", "plotly", "_plotly_utils", "narwhals", "django")
statements = []


def record(execute, sql, params, many, context):
    statements.append(sql)
    return execute(sql, params, many, context)


populated = []
populate = URLResolver._populate


def counted_populate(self):
    populated.append(str(self.pattern))
    return populate(self)


URLResolver._populate = counted_populate

# Every connection, in whichever thread Django's ASGI handler opens it.
connection_created.connect(lambda sender, connection, **kw: connection.execute_wrappers.append(record), weak=False)


async def start_up():
    queue = asyncio.Queue()
    await queue.put({"type": "lifespan.startup"})
    sent = []

    async def send(message):
        sent.append(message["type"])
        await queue.put({"type": "lifespan.shutdown"})

    await application({"type": "lifespan", "asgi": {"version": "3.0"}}, queue.get, send)
    return sent


async def main(start, session, paths):
    report = {"lifespan": await start_up() if start else [], "start_sql": list(statements)}
    report["cache_after_start"] = merge_cache.weight
    report["frozen_after_start"] = gc.get_freeze_count()
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", cookies=session) as client:
        report["requests"] = []
        for item in paths:
            language, _, path = item.partition(" ")
            before, built = set(sys.modules), len(populated)
            response = await client.get(path, headers={"Accept-Language": language})
            new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in WATCHED)
            report["requests"].append(
                {"path": item, "status": response.status_code, "imported": new, "populated": populated[built:]}
            )
    print(json.dumps(report))


asyncio.run(main(sys.argv[1] == "start", json.loads(sys.argv[2]), sys.argv[3:]))
"""


@pytest.fixture
def first_requests(make_probe, make_region, django_user_model, test_redis_url):
    regions = [make_region(slug="lagos", name="Lagos"), make_region(slug="oslo", name="Oslo")]
    probe = make_probe(regions=regions)
    now = datetime.now(UTC)
    for i, region in enumerate(regions):
        spread_measurements(probe, region, now - timedelta(minutes=50), now, 30, seed=i, fail_every=5)
    browser = Client()
    # Staff: the header then links to the admin ({% url "admin:index" %}), whose namespace has resolvers of its own.
    staff = django_user_model.objects.create_user(username="first", password="x-long-password-271", is_staff=True)
    browser.force_login(staff)
    session = {"sessionid": browser.cookies["sessionid"].value}
    query = f"target={probe.target_id}&window=1h&percentile=p95&metric=ttft"
    paths = [f"en /api/{name}?{query}" for name in ("overview", "histograms", "timeseries", "phases", "table")]
    objective = counted(ServiceLevelObjectiveFactory(targets=[probe.target]))
    paths += ["en /", "en /slos/", f"en /slos/{objective.id}/", "zh-hans /", f"zh-hans /slos/{objective.id}/"]
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(dict(connection.settings_dict)),
        "REDIS_URL": test_redis_url,
        "DEBUG": "false",
        "LATENCY_PUBLIC_DASHBOARD": "false",
        "LATENCY_PRODUCTION": "false",
    }

    def run(start: bool) -> dict:
        args = [sys.executable, "-c", FIRST_REQUESTS, "start" if start else "no-start", json.dumps(session), *paths]
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-4000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run


def test_after_the_start_up_the_first_requests_import_nothing_and_the_start_read_no_measurement(first_requests):
    report = first_requests(start=True)
    assert report["lifespan"] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    for request in report["requests"]:
        assert request["status"] == 200, request
        assert request["imported"] == [], request
        assert request["populated"] == [], request
    # The start-up asked the database for nothing of ours (no measurement, no rollup) ...
    assert report["start_sql"], "the start-up opened no connection"
    assert not [sql for sql in report["start_sql"] if "probes_" in sql]
    # ... and left the merge cache empty: the first request reads its data itself.
    assert report["cache_after_start"] == 0
    # What the start made is out of the garbage collector's way: no full collection of it lands on a request.
    assert report["frozen_after_start"] > 10_000


def test_without_the_start_up_the_first_request_imports_the_chart_library(first_requests):
    report = first_requests(start=False)
    assert report["frozen_after_start"] == 0
    first = report["requests"][0]
    assert first["status"] == 200
    assert any(name.startswith("plotly.") for name in first["imported"]), first
    # ... and a page builds the resolvers' tables, which the counting above would see.
    assert any(request["populated"] for request in report["requests"]), report["requests"]
