"""What the web process does once at start, before it accepts a request, so
that the first request after a start costs what a later one does (issue 17:
every dashboard endpoint under 150 ms on the first request too).

A first request used to pay, besides its data, for what Python and Django
do lazily: plotly imports its figure classes on first use (hundreds of
modules, narwhals among them, and the layout template, for the first figure
of each kind), the URL resolver fills its tables, templates
and translation catalogs are compiled and read, and the first database
connection makes psycopg and django.contrib.postgres look up their types;
and the first full garbage collection scans every object the start made;
and memory the process never wrote costs a page fault per 4 KB when a read's
large arrays first take it (latency.memory). prepare() does all of that here
(and freezes those objects, and writes that memory once), the way a
preloading server would.

It reads no measurement and fills no cache of probes.readings: the figures
are drawn from a made-up reading of two regions, and the database is asked
for its version and for plans (EXPLAIN, no row read) that fill each pooled
connection's catalog caches (use_pool, warm_statements). The first request
still reads its own data (that is the "no warm cache" of the issue). ASGI
servers run it through the lifespan protocol (latency.asgi), so tests and
manage.py commands, which import the application without serving it, never
pay for it.
"""

from __future__ import annotations

import gc
import logging
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from psycopg import Error as PsycopgError
from psycopg_pool import PoolTimeout

from latency import memory
from probes.readings import side_by_side

log = logging.getLogger(__name__)

# Made-up regions for the sample figures: ids no table hands out.
SAMPLE_REGIONS = [
    {"id": -1, "slug": "sample-north", "name": "Sample north", "lat": 52.0, "lon": 13.0, "value": 310.0},
    {"id": -2, "slug": "sample-south", "name": "Sample south", "lat": -33.0, "lon": 18.0, "value": 620.0},
    {"id": -3, "slug": "sample-quiet", "name": "Sample quiet", "lat": 1.0, "lon": 104.0, "value": None},
]


def sample_figures() -> list:
    """Every kind of figure the API draws (latency.api), from made-up rows
    that take each branch that creates plotly objects: the map with a
    target, paths, grey, dark and stale regions and real users; the
    distribution; the time series as heatmap and as lines; the phases; a
    figure with no data. Plain functions: nothing is read."""
    from latency import charts
    from latency.charts.distribution import histogram_figure
    from latency.charts.over_time import timeseries_figure
    from latency.charts.real_users import real_users_trace
    from probes import metrics
    from probes.histogram import Histogram
    from probes.readings.fleet import RegionHealth
    from probes.readings.realusers import RealUserRow, figure_keys

    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    metric = metrics.METRICS[0].name
    rows = [
        {
            **r,
            "city": r["name"],
            "country": "",
            "samples": 40 if r["value"] else 0,
            "errors": 2 if r["value"] else 0,
            "error_rate": 0.05 if r["value"] else None,
            "p50": r["value"],
            "p95": r["value"] and r["value"] * 2,
            "connect_p50": 30.0,
            "floor_ms": 40.0,
            "tax_ms": 20.0,
        }
        for r in SAMPLE_REGIONS
    ]
    health = {-2: RegionHealth(-2, "stale", now), -3: RegionHealth(-3, "dark", None)}
    target = {"id": -1, "name": "Sample target", "location_name": "Sample place", "lat": 40.0, "lon": -74.0}
    real = [
        RealUserRow(
            bucket=None,
            country="",
            city=r["name"],
            latitude=r["lat"],
            longitude=r["lon"],
            target_id=None,
            target="",
            host="example.org",
            model="sample",
            samples=12,
            errors=1,
            figures=dict.fromkeys(figure_keys(), 300.0),
        )
        for r in SAMPLE_REGIONS
    ]
    world = charts.world_map(rows, target, metric, "p95", health)
    for scale in (True, False):
        if trace := real_users_trace(real, scale=scale):
            world.add_trace(trace)
    hists = {}
    for k, r in enumerate(SAMPLE_REGIONS[:2]):
        hists[r["slug"]] = Histogram()
        for i in range(1, 50):
            hists[r["slug"]].add(100.0 * (k + 1) + 7.0 * i)
    series = [
        {
            "bucket_start": now - timedelta(hours=h),
            "at": now - timedelta(hours=h, minutes=-30),
            "region": r["slug"],
            "region_name": r["name"],
            "p50": 300.0 + h,
            "p95": 600.0 + h,
            "value": 300.0 + h,
            "samples": 10,
        }
        for r in SAMPLE_REGIONS
        for h in (1, 2, 4)
    ]
    window = (now - timedelta(hours=6), now)
    phases = [
        {
            "region": r["slug"],
            "region_name": r["name"],
            "samples": 10,
            "medians": {},
            "segments": dict.fromkeys(charts.SEGMENT_COLORS, 10.0),
        }
        for r in SAMPLE_REGIONS
    ]
    import plotly.graph_objects as go

    return [
        world,
        histogram_figure(hists, metric, 0.95, names={r["slug"]: r["name"] for r in SAMPLE_REGIONS}),
        timeseries_figure(series, metric, "p95", lines=False, step=timedelta(hours=1), window=window),
        timeseries_figure(series, metric, "p95", lines=True, step=timedelta(hours=1), window=window),
        charts.phases_figure(phases),
        charts.no_data(go.Figure(), "no data"),
    ]


def prepare_charts() -> None:
    from latency import charts

    for figure in sample_figures():
        charts.figure_json(figure)
    # The objective page's figures are plain JSON with this template (latency.charts.objectives).
    charts.template_json()


def prepare_urls() -> None:
    """The URL conf and every module it names imported, and the resolvers'
    tables (filled on the first resolve or reverse, for each language and
    each namespace apart) built."""
    from django.urls import reverse
    from django.utils import translation

    from probes.compat.django import populate_resolver

    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            populate_resolver()
            reverse("overview")


def prepare_templates() -> None:
    """Our templates (settings.TEMPLATES' DIRS) and Django's form widget
    templates compiled into the cached loaders, and the context processors
    imported (on the first render otherwise); nothing is rendered."""
    import django.forms
    from django.forms.renderers import get_default_renderer
    from django.template import engines

    for engine in engines.all():
        _ = engine.engine.template_context_processors
        for folder in engine.dirs:
            for path in sorted(Path(folder).rglob("*.html")):
                engine.get_template(path.relative_to(folder).as_posix())
    renderer = get_default_renderer()
    widgets = Path(django.forms.__file__).parent / "templates"
    for path in sorted(widgets.rglob("*.html")):
        renderer.get_template(path.relative_to(widgets).as_posix())


def prepare_languages() -> None:
    """Every language's translation catalogs read (activating a language
    reads them), and its date and number formats (Django's and
    latency.formats) imported: both on first use."""
    from django.utils import formats, translation

    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            formats.get_format("DATETIME_FORMAT")


def prepare_sessions() -> None:
    """What the session, messages and auth machinery imports by dotted path
    on a request's first use of it."""
    from django.contrib.auth import get_backends
    from django.utils.module_loading import import_string

    import_string(settings.MESSAGE_STORAGE)
    import_string(settings.SESSION_SERIALIZER)
    get_backends()


def use_pool() -> None:
    """The web process's connections from a pool (settings.LATENCY_DB_POOL), set before the first one opens.
    Under ASGI each request runs in a thread of its own and closes its connection at its end (latency.asgi):
    without a pool every request opened a new PostgreSQL backend, which looks up again the catalog rows of
    every table, index and partition it reads on its first statement. Pooled,
    the closing hands the connection back open. Only here, at the server's start: tests, management commands
    and workers import the application without serving it and keep Django's own connections."""
    if not settings.LATENCY_DB_POOL:
        return
    db = settings.DATABASES["default"]
    # A pooled connection goes back to the pool at the end of its request: Django refuses a pool with
    # persistent connections (latency.asgi turns them off for the web process anyway).
    db["CONN_MAX_AGE"] = 0
    db["OPTIONS"].setdefault(
        "pool", {"min_size": settings.LATENCY_DB_POOL_MIN, "max_size": settings.LATENCY_DB_POOL_MAX, "timeout": 10}
    )
    # With connections to spare, a window's parts are read side by side (probes.readings.side_by_side).
    side_by_side.enable(settings.LATENCY_READ_THREADS)


def warm_statements() -> list[str]:
    """EXPLAIN (a plan, no row read) of a statement over each table the pages read, shaped like its
    readers' (the time column in a range, the grouping columns): planning it loads what a backend keeps for
    the rest of its life, the tables', indexes' and day partitions' catalog rows and column statistics. now()
    is not constant to the planner, so every partition of the raw table is opened, not one day's."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    from probes.models import (
        HourlyRollup,
        Incident,
        Measurement,
        MissedRun,
        ModelGroup,
        Probe,
        Region,
        RegionRollup,
        RollupHour,
        SeriesBlockMark,
        SeriesRollup,
        ServiceLevelObjective,
        Silence,
        SLOCounted,
        SLODayCount,
        SLOFiveMinuteCount,
        SLOHourCount,
        Target,
    )

    def table(model) -> str:
        return connection.ops.quote_name(model._meta.db_table)

    blocks = "(span_hours, start) IN (SELECT * FROM unnest('{48}'::int[], ARRAY[now()]))"
    grouped = [
        (Measurement, "started_at >= now() - interval '1 hour' AND scheduled_for >= now() - interval '2 hours'"),
        (HourlyRollup, "hour >= now() - interval '1 day'"),
        (SeriesRollup, blocks),
        (MissedRun, "scheduled_for >= now() - interval '1 day'"),
    ]
    statements = [
        f"EXPLAIN SELECT region_id, target_id, count(*) FROM {table(model)} WHERE {where} GROUP BY 1, 2"
        for model, where in grouped
    ]
    statements += [
        f"EXPLAIN SELECT region_id, count(*) FROM {table(RegionRollup)} WHERE {blocks} GROUP BY 1",
        f"EXPLAIN SELECT * FROM {table(RollupHour)} WHERE hour >= now() - interval '30 days'",
        f"EXPLAIN SELECT * FROM {table(SeriesBlockMark)} WHERE start >= now() - interval '30 days'",
        f"EXPLAIN SELECT * FROM {table(Session)} WHERE session_key = ''",
        f"EXPLAIN SELECT * FROM {table(get_user_model())} WHERE id = 0",
    ]
    statements += [f"EXPLAIN SELECT * FROM {table(model)}" for model in (Region, Target, Probe)]
    # The objectives' pages (probes.readings.slos): their counts, the objectives with what they cover, and the
    # silences and incidents read beside them.
    counts = [(SLOHourCount, "hour"), (SLODayCount, "day"), (SLOFiveMinuteCount, "start")]
    statements += [
        f"EXPLAIN SELECT objective_id, target_id, region_id, sum(good) FROM {table(model)} "
        f"WHERE objective_id = ANY('{{0}}') AND {column} >= now() - interval '30 days' GROUP BY 1, 2, 3"
        for model, column in counts
    ]
    covers = [ServiceLevelObjective.targets.through, ServiceLevelObjective.regions.through, ModelGroup.targets.through]
    statements += [f"EXPLAIN SELECT * FROM {table(model)}" for model in (ServiceLevelObjective, SLOCounted, *covers)]
    statements += [
        f"EXPLAIN SELECT * FROM {table(Silence)} WHERE target_id = 0 AND ends_at > now()",
        f"EXPLAIN SELECT * FROM {table(Incident)} WHERE objective_id = 0 AND started_at > now()",
    ]
    return statements


def prepare_database() -> None:
    """The first connection opened: the per-process lookups (psycopg's and django.contrib.postgres's types)
    are done. With the pool (use_pool), every connection it opens at start plans warm_statements(), so the
    first requests, whichever connection they get, find their backends' catalog caches filled. A database
    down at start only leaves all of it to the first request."""
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT version()")
        connection.close()
        pool = connection.pool
        if pool is None:
            return
        pool.wait(timeout=10)
        held = [pool.getconn(timeout=10) for _ in range(pool.min_size)]
        try:
            statements = warm_statements()
            for conn in held:
                with conn.cursor() as cur:
                    for statement in statements:
                        cur.execute(statement)
                if not conn.autocommit:
                    conn.rollback()
        finally:
            for conn in held:
                pool.putconn(conn)
    except (DatabaseError, PsycopgError, PoolTimeout) as exc:
        log.warning("start-up: no database connection yet (%s); the first request will open it", exc)
    finally:
        connection.close()


def reserve_memory() -> None:
    """Write the memory the reads' large arrays will take (latency.memory; glibc was told to keep it by
    Lifespan before any thread started)."""
    memory.reserve(settings.LATENCY_WEB_MEMORY_RESERVE_MB)


def freeze_start_objects() -> None:
    """The objects made so far (modules, figure classes, templates: hundreds
    of thousands) live as long as the process. Left to the collector, the
    first full collection scans them all, and it struck one of the first
    requests, most of its time; frozen, no collection looks at them again."""
    gc.collect()
    gc.freeze()


STEPS = (
    use_pool,  # first: before any connection opens
    prepare_urls,
    prepare_templates,
    prepare_languages,
    prepare_sessions,
    prepare_charts,
    prepare_database,
    reserve_memory,
    freeze_start_objects,  # last: after everything the start made
)


def prepare() -> dict[str, float]:
    """Run every step; returns each one's seconds (logged at INFO)."""
    took = {}
    for step in STEPS:
        t = time.perf_counter()
        step()
        took[step.__name__] = time.perf_counter() - t
    log.info("start-up: prepared in %s", ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in took.items()))
    return took


class Lifespan:
    """The ASGI lifespan protocol: prepare() on the server's start, in the
    thread Django's ASGI handler runs synchronous code in, before the
    server listens."""

    async def __call__(self, scope, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # Here, on the event loop's thread, before the thread that runs prepare() and the requests' sync
                # code starts: each thread that allocates before this keeps a heap of its own.
                memory.keep_freed(settings.LATENCY_WEB_MEMORY_RESERVE_MB)
                try:
                    await sync_to_async(prepare, thread_sensitive=True)()
                except Exception:
                    # An optimisation only: whatever breaks it must not keep the site from serving (the first
                    # requests then pay what it would have done). Logged with its traceback, not hidden.
                    log.exception("start-up: preparing for the first request failed")
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
