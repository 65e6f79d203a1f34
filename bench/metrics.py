#!/usr/bin/env python
"""How fast does GET /metrics answer for 6 targets x 15 regions?

Data: its own database, latency_metricsbench (created with `manage.py ensuredb`, migrated every run), reloaded at
every run so the trailing windows end now: 6 bench targets, one probe each over the 15 seeded regions, one
measurement per pair every --interval seconds (10) over the last --hours (24): 777,600 rows by default, loaded
inside PostgreSQL with INSERT ... SELECT FROM generate_series; TTFT log-normal per pair, 2% timeouts without
timings. The tally (probes.tally) is filled from those rows with ingest's own upsert, and each region has a live
worker. Then VACUUM ANALYZE.

Measured in one run:
  (a) the scrape over HTTP: `uvicorn latency.asgi:application` in a subprocess, `Authorization: Bearer` with the
      bench's LATENCY_METRICS_TOKEN, httpx with keep-alive, the body read; --warmups, then --scrapes timed;
  (b) the same scrape in this process (probes.prometheus.render), for where the time goes, wall time and this
      process's CPU time (the Python side, which other load on the machine does not lengthen);
  (c) the reference: every SQL statement a scrape runs (captured from (b)), replayed on a plain psycopg cursor:
      the database's share, with no Django, collector or HTTP around it;
  (d) a refused scrape (wrong token: 401) from the same server: what HTTP, uvicorn and the middleware cost alone.
Median and p95 of each, and the ratio (a) / (c). Goal: (a) p95 under 100 ms.

    .venv/bin/python -m devtools.embedded run -- .venv/bin/python bench/metrics.py [--hours 24] [--interval 10]
                                                  [--scrapes 50] [--warmups 3] [--json]

Exit status: 0 when the benchmark ran (see PASS/MISS), 1 when it could not run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
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

BENCH_DB = "latency_metricsbench"
TOKEN = "metricsbench-token-not-a-secret-0123456789"
TARGETS = 6
REGIONS = 15
GOAL_MS = 100.0


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def prepare(hours: int, interval: int) -> dict:
    """Configuration, rows, tally and workers; returns what was loaded."""
    from django.db import connection

    from probes.models import Measurement, MeasurementTally, Probe, Region, Target, Worker
    from probes.tally import tally_sql

    regions = list(Region.objects.order_by("id")[:REGIONS])
    if len(regions) < REGIONS:
        raise BenchError(f"expected the {REGIONS} seeded regions, found {len(regions)}")
    probes = []
    for i in range(TARGETS):
        target, _ = Target.objects.get_or_create(
            name=f"metricsbench-{i}",
            defaults={
                "api_style": "openai",
                "url": f"https://bench-{i}.invalid/v1/chat/completions",
                "model": "bench-model",
                "api_key_env": "BENCH_API_KEY",
            },
        )
        probe, created = Probe.objects.get_or_create(
            target=target,
            name="metricsbench",
            defaults={"interval_seconds": interval, "timeout_seconds": min(30.0, interval / 2)},
        )
        if created:
            probe.regions.set(regions)
        probes.append(probe)
    now = datetime.now(UTC).replace(microsecond=0)
    start = now - timedelta(hours=hours)
    pairs = [
        (p.id, p.target_id, r.id, 150.0 + 40 * k + 9 * j) for k, p in enumerate(probes) for j, r in enumerate(regions)
    ]
    values = ", ".join(f"({a}, {b}, {c}, {d})" for a, b, c, d in pairs)
    table = Measurement._meta.db_table
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {table}, {MeasurementTally._meta.db_table}")
        harness.ensure_day_partitions(start, now)
        t = time.perf_counter()
        cur.execute(
            f"""
            INSERT INTO {table} (probe_id, target_id, region_id, scheduled_for, started_at, worker, ingested_at,
                outcome, connection, dns_ms, connect_ms, tls_ms, ttfb_ms, ttft_ms, ttfat_ms, total_ms, tokens_per_s,
                http_status, output_tokens)
            SELECT probe_id, target_id, region_id, s, s + interval '0.2 s', 'bench', s,
                CASE WHEN f THEN 'timeout' ELSE 'ok' END, 'cold',
                CASE WHEN f THEN NULL ELSE 4.0 END, CASE WHEN f THEN NULL ELSE base / 10 END,
                CASE WHEN f THEN NULL ELSE base / 5 END, CASE WHEN f THEN NULL ELSE base / 2 + 4.0 + ttft / 4 END,
                CASE WHEN f THEN NULL ELSE base + ttft END, CASE WHEN f THEN NULL ELSE base + ttft + 5 END,
                CASE WHEN f THEN NULL ELSE base + ttft + 800 END, CASE WHEN f THEN NULL ELSE 60.0 END,
                CASE WHEN f THEN NULL ELSE 200 END, CASE WHEN f THEN NULL ELSE 48 END
            FROM (
                SELECT p.*, s, random() < 0.02 AS f,
                       base * exp(0.5 * (random() + random() + random() - 1.5)) AS ttft
                FROM (VALUES {values}) AS p(probe_id, target_id, region_id, base)
                CROSS JOIN generate_series(%s::timestamptz, %s::timestamptz, %s * interval '1 second') AS s
            ) x
            """,
            [start, now - timedelta(seconds=1), interval],
        )
        rows = cur.rowcount
        cur.execute(tally_sql(table))
        load_s = time.perf_counter() - t
        cur.execute(f"VACUUM ANALYZE {table}")
    Worker.objects.all().delete()
    for j, region in enumerate(regions):
        Worker.objects.create(
            instance=f"metricsbench-{j}",
            region=region,
            key_id=f"{j:016x}",
            name=f"celery@bench-{j}",
            hostname=f"bench-{j}",
            release="bench",
            schema=2,
            engine="bench",
            state=Worker.RUNNING,
            last_seen=now,
            started_at=now - timedelta(hours=1),
            in_flight=0,
            queue_depth=0,
        )
    return {"rows": rows, "load_s": load_s, "pairs": len(pairs)}


def time_http(
    origin: str, scrapes: int, warmups: int, token: str = TOKEN, status: int = 200
) -> tuple[list[float], int]:
    import httpx

    times = []
    with httpx.Client(base_url=origin, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        size = 0
        for i in range(warmups + scrapes):
            t = time.perf_counter()
            response = client.get("/metrics")
            body = response.content
            elapsed = time.perf_counter() - t
            if response.status_code != status:
                raise BenchError(f"/metrics answered {response.status_code}: {body[:200]!r}")
            if i >= warmups:
                times.append(elapsed * 1000)
            size = len(body)
    return times, size


def time_in_process(scrapes: int, warmups: int) -> tuple[list[float], list[float], list[tuple[str, object]]]:
    """Render timings (wall and this process's CPU: the Python side, whatever else the machine runs), and the
    statements one render runs (sql, params)."""
    from django.db import connection

    from probes.prometheus import render

    statements: list[tuple[str, object]] = []

    def capture(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        render("")
    times, cpu = [], []
    for i in range(warmups + scrapes):
        t, c = time.perf_counter(), time.process_time()
        render("")
        if i >= warmups:
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
    return times, cpu, statements


def time_reference(statements: list[tuple[str, object]], scrapes: int, warmups: int) -> list[float]:
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    times = []
    with psycopg.connect(**params, autocommit=True) as conn, conn.cursor() as cur:
        for i in range(warmups + scrapes):
            t = time.perf_counter()
            for sql, args in statements:
                cur.execute(sql, args)
                cur.fetchall()
            if i >= warmups:
                times.append((time.perf_counter() - t) * 1000)
    return times


def summary(times: list[float]) -> dict:
    return {"median_ms": statistics.median(times), "p95_ms": percentile(times, 0.95), "n": len(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--scrapes", type=int, default=50)
    parser.add_argument("--warmups", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        env = harness.bench_env(
            BENCH_DB,
            channel_prefix="latency-metricsbench",
            extra={"LATENCY_METRICS_TOKEN": TOKEN, "LATENCY_PUBLIC_DASHBOARD": "false", "DEBUG": "false"},
        )
        os.environ.update(env)
        import django

        django.setup()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput")
        log(
            f"metrics bench: loading {TARGETS} targets x {REGIONS} regions, every {args.interval} s over {args.hours} h"
        )
        data = prepare(args.hours, args.interval)
        log(f"metrics bench: {data['rows']:,} rows in {data['load_s']:.1f} s")

        from django.db import connection

        in_process, in_process_cpu, statements = time_in_process(args.scrapes, args.warmups)
        reference = time_reference(statements, args.scrapes, args.warmups)
        connection.close()
        log_path = Path(os.environ.get("TMPDIR", "/tmp")) / "metricsbench-uvicorn.log"
        log_path.unlink(missing_ok=True)
        with harness.UvicornServer(env, log_path, access_log=False, collect_static=False) as server:
            http, size = time_http(server.origin, args.scrapes, args.warmups)
            floor, _ = time_http(server.origin, args.scrapes, args.warmups, token="wrong-token", status=401)
    except BenchError as exc:
        log(f"metrics bench: {exc}")
        return 1

    result = {
        "data": data,
        "statements": len(statements),
        "body_bytes": size,
        "http": summary(http),
        "in_process": summary(in_process),
        "in_process_cpu": summary(in_process_cpu),
        "reference_sql": summary(reference),
        "http_401_floor": summary(floor),
        "machine": harness.machine_context(),
    }
    result["ratio_http_to_sql"] = result["http"]["median_ms"] / result["reference_sql"]["median_ms"]
    result["pass"] = result["http"]["p95_ms"] < GOAL_MS
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(f"data: {data['rows']:,} measurements, {data['pairs']} target x region pairs; body {size:,} bytes")
        for name, label in (
            ("http", "GET /metrics over HTTP"),
            ("in_process", "render() in process"),
            ("in_process_cpu", "  its CPU time in this process (Python)"),
            ("reference_sql", f"its {len(statements)} SQL statements, plain cursor"),
            ("http_401_floor", "a 401 from the same server (HTTP floor)"),
        ):
            s = result[name]
            print(f"{label:<42} median {s['median_ms']:7.1f} ms   p95 {s['p95_ms']:7.1f} ms   (n={s['n']})")
        print(f"ratio HTTP / SQL (medians): {result['ratio_http_to_sql']:.1f}x")
        machine = result["machine"]
        print(f"machine: {machine['usable_cpus']} CPUs, load average {machine['loadavg']} at the end")
        verdict = "PASS" if result["pass"] else "MISS"
        print(f"goal: p95 of a scrape under {GOAL_MS:.0f} ms: {verdict} ({result['http']['p95_ms']:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
