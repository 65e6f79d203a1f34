#!/usr/bin/env python
"""What do the slot-time bounds every raw read adds (probes.readings.slots) cost on today's table, and what do they
save on one partitioned by day of scheduled_for?

Data: its own database, latency_slotsbench (created with `manage.py ensuredb`, migrated every run), reloaded at every
run: 6 targets x 15 regions, one row per pair every --interval seconds (900) over the last --days (62), each started
0 to 90 s after its slot, 2% timeouts (inserted in SQL as bench/metrics.py does); rollups built for
every complete hour but the last --raw-hours (3), as the beat leaves them. Then a copy, slotsbench_parted, range
partitioned by UTC day of scheduled_for with the table's indexes (what the partitions helper's migration makes),
and VACUUM ANALYZE of both.

The statements: every read of raw measurements the dashboard's calls run (table, series, map, distribution for
1 h, 24 h, 7 d and 30 d, all targets and one), an alert pass's window, /metrics' last results and trailing
quantiles, a target page's recent rows and failures, an API page, measurements.csv's and regions.csv's SELECTs,
captured as run and rendered with their values. Each is timed by EXPLAIN (ANALYZE, FORMAT JSON), planning and
execution, median of --runs after one warm-up, as it is ("now") and as main ran it ("main": the scheduled_for
conditions taken out; for the reads without a window, main's one statement over all time), on the plain table and on
the partitioned copy, the four in turn within each run; with the relations each scanned and the rows it returned
(checked equal).

    .venv/bin/python bench/slot_bounds.py [--days 62] [--interval 900] [--runs 7]   (machine's PostgreSQL)
    .venv/bin/python bench/slot_bounds.py --no-load [--only LABEL]   (the last run's data again)

Exit status: 0 when the benchmark ran, 1 when it could not run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from devtools import harness  # noqa: E402
from devtools.harness import BenchError, manage  # noqa: E402

BENCH_DB = "latency_slotsbench"
PARTED = "slotsbench_parted"
TARGETS = 6
REGIONS = 15
WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}
# The measurement's scheduled_for (never the missed runs' mr.scheduled_for), bare, as m. or quoted and qualified.
_SLOT = r"(?:\"(?:probes_measurement|m)\"\.\"?scheduled_for\"?|\bm\.scheduled_for|(?<![\w.\"])scheduled_for)"
# A slot condition as rendered: AND <column> <op> '<time>'::timestamptz, or first in its group (Django's order)
# <column> <op> '<time>'::timestamptz AND.
SLOT_COND = re.compile(
    rf"\s+AND\s+{_SLOT}\s*(?:>=|<=|<)\s*'[^']*'(?:::timestamptz)?"
    rf"|(?<=\(){_SLOT}\s*(?:>=|<=|<)\s*'[^']*'(?:::timestamptz)?\s+AND\s+"
)
# The first span of the reads without a window (probes.readings.slots.newest_first), in each form they render it:
# (started_at >= '...'), alone or first among the conditions of a WHERE.
SPAN_BOUND = re.compile(
    r"(?:\s+AND\s+\((?:m\.)?started_at >= '[^']*'(?:::timestamptz)?\)"
    r"|\"probes_measurement\"\.\"started_at\" >= '[^']*'(?:::timestamptz)? AND )"
)
FIVE = timedelta(minutes=5)


def strip_slots(text: str) -> str:
    """The statement without its slot conditions (removing one may put the next first in its group)."""
    while (shorter := SLOT_COND.sub("", text)) != text:
        text = shorter
    return text


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def load(days: int, interval: int, raw_hours: int) -> dict:
    from django.db import connection

    from probes.models import (
        HourlyRollup,
        Measurement,
        MeasurementTally,
        Probe,
        Region,
        RollupHour,
        Target,
    )
    from probes.rollups import floor_hour, rebuild_range
    from probes.tally import tally_sql

    regions = list(Region.objects.order_by("id")[:REGIONS])
    if len(regions) < REGIONS:
        raise BenchError(f"expected the {REGIONS} seeded regions, found {len(regions)}")
    probes = []
    for i in range(TARGETS):
        target, _ = Target.objects.get_or_create(
            name=f"slotsbench-{i}",
            defaults={"api_style": "openai", "url": f"https://bench-{i}.invalid/v1", "model": "m", "api_key_env": "K"},
        )
        probe, created = Probe.objects.get_or_create(
            target=target, name="slotsbench", defaults={"interval_seconds": 60}
        )
        if created:
            probe.regions.set(regions)
        probes.append(probe)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    pairs = ", ".join(
        f"({p.id}, {p.target_id}, {r.id}, {150.0 + 40 * k + 9 * j})"
        for k, p in enumerate(probes)
        for j, r in enumerate(regions)
    )
    table = Measurement._meta.db_table
    t = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {PARTED}")
        cleared = [m._meta.db_table for m in (Measurement, MeasurementTally, HourlyRollup, RollupHour)]
        cur.execute(f"TRUNCATE {', '.join(cleared)}")
        cur.execute(
            f"""
            INSERT INTO {table} (probe_id, target_id, region_id, scheduled_for, started_at, worker, ingested_at,
                outcome, connection, dns_ms, connect_ms, tls_ms, ttfb_ms, ttft_ms, ttfat_ms, total_ms, tokens_per_s,
                http_status, output_tokens)
            SELECT probe_id, target_id, region_id, s, s + random() * interval '90 s', 'bench', s,
                CASE WHEN f THEN 'timeout' ELSE 'ok' END, 'cold',
                CASE WHEN f THEN NULL ELSE 4.0 END, CASE WHEN f THEN NULL ELSE base / 10 END,
                CASE WHEN f THEN NULL ELSE base / 5 END, CASE WHEN f THEN NULL ELSE base / 2 + ttft / 4 END,
                CASE WHEN f THEN NULL ELSE base + ttft END, CASE WHEN f THEN NULL ELSE base + ttft + 5 END,
                CASE WHEN f THEN NULL ELSE base + ttft + 800 END, CASE WHEN f THEN NULL ELSE 60.0 END,
                CASE WHEN f THEN NULL ELSE 200 END, CASE WHEN f THEN NULL ELSE 48 END
            FROM (
                SELECT p.*, s, random() < 0.02 AS f, base * exp(0.5 * (random() + random() + random() - 1.5)) AS ttft
                FROM (VALUES {pairs}) AS p(probe_id, target_id, region_id, base)
                CROSS JOIN generate_series(%s::timestamptz, %s::timestamptz, %s * interval '1 second') AS s
            ) x
            """,
            [now - timedelta(days=days), now - timedelta(minutes=2), interval],
        )
        rows = cur.rowcount
        cur.execute(tally_sql(table))
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    rebuild_range(floor_hour(now - timedelta(days=days)), floor_hour(now) - timedelta(hours=raw_hours))
    rollup_s = time.perf_counter() - t
    first = (now - timedelta(days=days + 1)).date()
    with connection.cursor() as cur:
        cur.execute(f"CREATE TABLE {PARTED} (LIKE {table} INCLUDING DEFAULTS) PARTITION BY RANGE (scheduled_for)")
        for d in range(days + 3):
            day = first + timedelta(days=d)
            cur.execute(
                f"CREATE TABLE {PARTED}_{day:%Y%m%d} PARTITION OF {PARTED} FOR VALUES FROM (%s) TO (%s)",
                [
                    datetime(day.year, day.month, day.day, tzinfo=UTC),
                    datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1),
                ],
            )
        cur.execute(f"INSERT INTO {PARTED} SELECT * FROM {table}")
        for name, columns, where in (
            ("tr", "target_id, region_id, started_at", ""),
            ("rs", "region_id, started_at", ""),
            ("ps", "probe_id, started_at", ""),
            ("slot", "probe_id, region_id, scheduled_for", ""),
            ("fail", "target_id, started_at", "WHERE outcome <> 'ok'"),
        ):
            cur.execute(f"CREATE INDEX {PARTED}_{name} ON {PARTED} ({columns}) {where}")
        cur.execute(f"CREATE INDEX {PARTED}_brin ON {PARTED} USING brin (started_at)")
        cur.execute(f"VACUUM ANALYZE {table}")
        cur.execute(f"VACUUM ANALYZE {PARTED}")
        cur.execute(f"SELECT count(*) FROM pg_inherits WHERE inhparent = '{PARTED}'::regclass")
        partitions = cur.fetchone()[0]
    return {"rows": rows, "load_s": load_s, "rollup_s": rollup_s, "partitions": partitions, "now": now}


def capture(now: datetime) -> list[tuple[str, list[str], str]]:
    """(label, the statements a read runs now, the one statement main ran for it) of every read, values rendered.

    A windowed read's statement on main is its own without the slot conditions; the reads without a window
    (recent, failures, last results) ran one statement over all time on main, now one per span looked in."""
    import psycopg
    from django.db import connection

    from probes import readings
    from probes.exports import ExportFilters
    from probes.exports.measurements import measurements_select, where_clause
    from probes.models import Target
    from probes.readings.alerts import window_calls
    from probes.readings.latest import latest_results, window_quantiles
    from probes.readings.recent import recent_failures, recent_measurements

    connection.ensure_connection()
    mogrify = psycopg.ClientCursor(connection.connection).mogrify
    out: list[tuple[str, list[str], str]] = []

    def run(label: str, call) -> list[str]:
        seen: list[str] = []

        def wrap(execute, text, params, many, context):
            if re.search(r"probes_measurement\b", text) and text.lstrip().upper().startswith(("SELECT", "WITH")):
                seen.append(mogrify(text, params))
            return execute(text, params, many, context)

        with connection.execute_wrapper(wrap):
            call()
        return seen

    def windowed(label: str, call) -> None:
        seen = run(label, call)
        out.extend((f"{label} #{i + 1}" if len(seen) > 1 else label, [t], strip_slots(t)) for i, t in enumerate(seen))

    one = Target.objects.filter(name__startswith="slotsbench").order_by("id").first()
    for name, span in WINDOWS.items():
        for scope, ids in (("all", []), ("one", [one.id])):
            sel = readings.Selection(target_ids=ids, since=now - span, until=now, window=name)
            for call in ("table", "series", "summary", "distribution_rows"):
                windowed(f"{call} {name} {scope}", lambda c=call, s=sel: getattr(readings, c)(s))
    windowed("alert window_calls", lambda: window_calls(now - timedelta(minutes=70), now, [one.id]))
    windowed("metrics window_quantiles", lambda: window_quantiles(now))
    f = ExportFilters(since=now - timedelta(days=1), until=now)
    api = readings.stored_measurements(f).order_by("-started_at", "-id")[:101]
    text, params = api.query.sql_with_params()
    out.append(("api measurements page 24h", [mogrify(text, params)], strip_slots(mogrify(text, params))))
    conn = connection.connection
    for label, composed in (
        ("measurements.csv 24h", measurements_select(where_clause(f))),
        ("regions.csv 24h 5m", readings.bucket_statement(readings.Selection(since=f.since, until=f.until), FIVE)),
    ):
        text = composed.as_string(conn)
        out.append((label, [text], strip_slots(text)))
    for label, call in (
        ("metrics latest_results", lambda: latest_results(now)),
        ("target recent", lambda: recent_measurements(one.id, 50, now)),
        ("target failures", lambda: recent_failures(one.id, 50, now)),
    ):
        seen = run(label, call)
        main_text = SPAN_BOUND.sub("", strip_slots(seen[0])).replace("LEFT JOIN LATERAL", "CROSS JOIN LATERAL")
        main_text = main_text.replace(") last ON TRUE", ") last")
        out.append((f"{label} ({len(seen)} statements)", seen, main_text))
    return out


def explain(cur, text: str) -> tuple[float, int, set[str]]:
    cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + text)
    doc = cur.fetchone()[0][0]
    relations: set[str] = set()

    def walk(node):
        if re.match(r"(probes_measurement|slotsbench_parted)($|_)", node.get("Relation Name", "")):
            relations.add(node["Relation Name"])
        for child in node.get("Plans", ()):
            walk(child)

    walk(doc["Plan"])
    return doc["Planning Time"] + doc["Execution Time"], doc["Plan"]["Actual Rows"], relations


def timed(cur, variants: list[list[str]], runs: int) -> list[dict]:
    """Per variant (its statements), the median over runs of their total planning and execution time, and rows
    and relations scanned summed over the statements. The variants run in turn within each run, so a burst of
    other load on the machine weighs on all of them alike."""
    for texts in variants:
        for text in texts:
            explain(cur, text)
    totals: list[list[float]] = [[] for _ in variants]
    first: list[list[tuple]] = []
    for i in range(runs):
        for v, texts in enumerate(variants):
            results = [explain(cur, text) for text in texts]
            totals[v].append(sum(r[0] for r in results))
            if i == 0:
                first.append(results)
    return [
        {"ms": statistics.median(t), "rows": sum(r[1] for r in f), "scanned": sum(len(r[2]) for r in f)}
        for t, f in zip(totals, first, strict=True)
    ]


def parted(text: str) -> str:
    return re.sub(r"\"?probes_measurement\"?(?=[\s.,)]|$)", PARTED, text)


def reloaded() -> dict:
    """What load() returned, from the data of an earlier run (--no-load)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT count(*), max(scheduled_for) FROM probes_measurement")
        rows, last = cur.fetchone()
        cur.execute(f"SELECT count(*) FROM pg_inherits WHERE inhparent = '{PARTED}'::regclass")
        partitions = cur.fetchone()[0]
    if not rows or not partitions:
        raise BenchError("no data of an earlier run: run without --no-load")
    return {"rows": rows, "partitions": partitions, "now": last + timedelta(minutes=2)}


def report(statements: list[tuple[str, list[str], str]], runs: int, only: str | None = None) -> list[str]:
    """Print each read's times; the reads slower with the slot bounds on the plain table."""
    from django.db import connection

    print("ms: median of planning + execution (EXPLAIN ANALYZE); main: without the slot bounds; now: with them")
    print(f"{'read':<38} {'rows':>6} | table: main    now | partitioned: main (scanned)    now (scanned)")
    worse = []
    with connection.cursor() as cur:
        cur.execute("SET jit = off")
        for label, texts, main_text in statements:
            if only and not label.startswith(only):
                continue
            if re.search(rf"{_SLOT}\s*(?:>=|<=|<)", main_text):
                raise BenchError(f"{label}: a slot bound was left in main's statement")
            a, b, c, d = timed(cur, [[main_text], texts, [parted(main_text)], [parted(t) for t in texts]], runs)
            rows = {a["rows"], c["rows"]} if len(texts) > 1 else {a["rows"], b["rows"], c["rows"], d["rows"]}
            if len(rows) != 1:
                raise BenchError(f"{label}: rows differ: {a['rows']} {b['rows']} {c['rows']} {d['rows']}")
            if b["ms"] > a["ms"] * 1.2 and b["ms"] - a["ms"] > 1:
                worse.append(label)
            print(
                f"{label:<38} {a['rows']:>6} | {a['ms']:>11.2f} {b['ms']:>6.2f} | {c['ms']:>17.2f} ({c['scanned']:>3})"
                f" {d['ms']:>9.2f} ({d['scanned']:>3})",
                flush=True,
            )
    return worse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=62)
    parser.add_argument("--interval", type=int, default=900)
    parser.add_argument("--raw-hours", type=int, default=3)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-load", action="store_true", help="time the data of the last run again")
    parser.add_argument("--only", help="time only the reads whose label starts with this")
    args = parser.parse_args()
    try:
        env = harness.bench_env(BENCH_DB, channel_prefix="latency-slotsbench")
        os.environ.update(env)
        import django

        django.setup()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput")
        if args.no_load:
            data = reloaded()
        else:
            data = load(args.days, args.interval, args.raw_hours)
            log(
                f"slots bench: {data['rows']:,} rows in {data['load_s']:.1f} s, rollups {data['rollup_s']:.1f} s, "
                f"{data['partitions']} partitions"
            )
        print(f"data: {data['rows']:,} rows; partitioned copy: {data['partitions']} day partitions")
        worse = report(capture(data["now"]), args.runs, args.only)
    except BenchError as exc:
        log(f"slots bench: {exc}")
        return 1
    machine = harness.machine_context()
    print(f"machine: {machine['usable_cpus']} CPUs, load average {machine['loadavg']} at the end")
    print("slower with the bounds (plain table, >20% and >1 ms): " + (", ".join(worse) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
