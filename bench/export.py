#!/usr/bin/env python
"""How fast does /export/measurements.csv stream, and in how much memory, next to psql's \\copy?

Data: 5,000,000 measurements (default) in their own database, latency_exportbench (created with `manage.py
ensuredb`, migrated every run, reused while it holds the requested row count; --reload loads again), 10
probe-region pairs, one row per pair every 0.864 s over five days, loaded inside PostgreSQL with INSERT ... SELECT
FROM generate_series; 2% of rows are timeouts with NULL token columns and an error text.

Measured in one run, alternating, 3 rounds (median reported):
  (a) the endpoint over HTTP: `uvicorn latency.asgi:application` in a subprocess, a session from the login form,
      httpx streaming the body (every byte read, lines counted); rows/s, and the server process's peak resident
      set (VmHWM from /proc/<pid>/status, which includes its start-up);
  (b) `psql -c "\\copy (SELECT ...) TO STDOUT CSV"` with exactly the SELECT the endpoint sends to COPY (same
      columns, joins, neutralisation, order), output to a pipe drained by this process; rows/s.
Goals: (a) at least half of (b)'s rows/s; peak memory of the server under 150 MB.

    .venv/bin/python bench/export.py [--rows 5000000] [--rounds 3] [--reload]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools import harness  # noqa: E402
from devtools.harness import manage  # noqa: E402

BENCH_DB = "latency_exportbench"
USERNAME = "exportbench"
PASSWORD = "exportbench-password-not-secret"
PAIRS = 10
START = datetime(2026, 1, 5, tzinfo=UTC)
SPAN = timedelta(days=5)
GOAL_RATIO = 0.5
GOAL_PEAK_MB = 150.0


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def bench_env() -> dict[str, str]:
    return harness.bench_env(
        BENCH_DB, channel_prefix="latency-exportbench", extra={"LATENCY_PUBLIC_DASHBOARD": "false", "DEBUG": "false"}
    )


def prepare(rows: int, reload: bool) -> None:
    from django.contrib.auth.models import Permission, User
    from django.db import connection

    from probes.models import Measurement, Probe, Region, Target

    if not reload and Measurement.objects.count() == rows:
        log(f"export bench: reusing {rows:,} measurements")
    else:
        log(f"export bench: loading {rows:,} measurements")
        t = time.perf_counter()
        with connection.cursor() as cur:
            cur.execute(
                "TRUNCATE probes_measurement, probes_hourlyrollup, probes_rolluphour,"
                " probes_seriesrollup, probes_seriesblockmark"
            )
        harness.ensure_day_partitions(START, START + SPAN)
        pairs = []
        for n in range(PAIRS):
            region, _ = Region.objects.get_or_create(
                slug=f"xb-region-{n}", defaults={"name": f"Bench region {n}", "city": f"City {n}", "country": "ZZ",
                                                 "latitude": 0.0, "longitude": 0.0})  # fmt: skip
            target, _ = Target.objects.get_or_create(
                name=f"bench target {n % 2}", defaults={"url": "http://127.0.0.1:9/v1/chat/completions",
                                                       "model": f"bench-model-{n % 2}"})  # fmt: skip
            probe, _ = Probe.objects.get_or_create(target=target, name=f"bench probe {n}")
            pairs.append((probe.id, target.id, region.id))
        per_pair = rows // PAIRS
        step = SPAN.total_seconds() / per_pair
        with connection.cursor() as cur:
            for probe_id, target_id, region_id in pairs:
                cur.execute(
                    """
                    INSERT INTO probes_measurement (probe_id, target_id, region_id, scheduled_for, started_at, worker,
                        ingested_at, outcome, error, connection, http_status, dns_ms, connect_ms, tls_ms, ttfb_ms,
                        ttft_ms, ttfat_ms, total_ms, output_tokens, tokens_per_s, itl_p50_ms)
                    SELECT %(p)s, %(t)s, %(r)s, s.t, s.t, 'bench-worker', s.t,
                        CASE WHEN i %% 50 = 7 THEN 'timeout' ELSE 'ok' END,
                        CASE WHEN i %% 50 = 7 THEN 'deadline of 30 s exceeded while reading the stream' END,
                        'cold', CASE WHEN i %% 50 = 7 THEN NULL ELSE 200 END,
                        2 + random() * 20, 20 + random() * 80, 30 + random() * 90, 200 + random() * 300,
                        250 + random() * 400, 260 + random() * 400, 900 + random() * 2000,
                        CASE WHEN i %% 50 = 7 THEN NULL ELSE 64 END,
                        CASE WHEN i %% 50 = 7 THEN NULL ELSE 40 + random() * 100 END, 5 + random() * 20
                    FROM generate_series(0, %(n)s - 1) AS i,
                         LATERAL (SELECT %(start)s::timestamptz + i * %(step)s * interval '1 second') s(t)
                    """,
                    {"p": probe_id, "t": target_id, "r": region_id, "n": per_pair, "start": START, "step": step},
                )
            cur.execute("ANALYZE probes_measurement")
        log(f"  loaded in {time.perf_counter() - t:.0f} s")
    user, _ = User.objects.get_or_create(username=USERNAME)
    user.set_password(PASSWORD)
    user.save()
    user.user_permissions.add(Permission.objects.get(codename="view_measurement"))


def peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) / 1024


def http_run(client, params: dict) -> tuple[int, float, float]:
    """(data rows, seconds, seconds to the first byte)."""
    lines, first = 0, None
    t = time.perf_counter()
    with client.stream("GET", "/export/measurements.csv", params=params) as response:
        if response.status_code != 200:
            raise SystemExit(f"export answered HTTP {response.status_code}")
        for chunk in response.iter_raw():
            if first is None:
                first = time.perf_counter() - t
            lines += chunk.count(b"\n")
    return lines - 1, time.perf_counter() - t, first


def psql_run(database_url: str, select: str) -> tuple[int, float]:
    t = time.perf_counter()
    proc = subprocess.Popen(["psql", "-X", "-q", "-d", database_url, "-c", f"\\copy ({select}) TO STDOUT CSV"],
                            stdout=subprocess.PIPE)  # fmt: skip
    lines = 0
    while chunk := proc.stdout.read(256 * 1024):
        lines += chunk.count(b"\n")
    if proc.wait() != 0:
        raise SystemExit(f"psql failed ({proc.returncode})")
    return lines, time.perf_counter() - t


def login(origin: str):
    import httpx

    client = httpx.Client(base_url=origin, timeout=600)
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    answer = client.post("/accounts/login/", data={"username": USERNAME, "password": PASSWORD,
                                                    "csrfmiddlewaretoken": token},
                         headers={"Referer": f"{origin}/accounts/login/"})  # fmt: skip
    if answer.status_code != 302:
        raise SystemExit(f"login failed (HTTP {answer.status_code})")
    return client


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reload", action="store_true")
    args = parser.parse_args()
    env = bench_env()
    os.environ.update(env)
    manage(env, "ensuredb")
    manage(env, "migrate", "--noinput")
    import django

    django.setup()
    import psycopg

    from devtools.harness import UvicornServer
    from probes.exports import ExportFilters
    from probes.exports.measurements import measurements_select, where_clause
    from probes.exports.pgcopy import connection_params

    prepare(args.rows, args.reload)
    since, until = START, START + SPAN + timedelta(minutes=1)
    with psycopg.connect(**connection_params()) as conn:
        select = measurements_select(where_clause(ExportFilters(since=since, until=until))).as_string(conn)
    params = {"since": since.isoformat(), "until": until.isoformat()}
    http, psql, firsts = [], [], []
    with UvicornServer(env, Path("/tmp/exportbench-uvicorn.log"), access_log=False, collect_static=False) as server:
        client = login(server.origin)
        pid = server.popen.pid
        log(f"export bench: server pid {pid}, peak RSS at start {peak_mb(pid):.1f} MB")
        for n in range(args.rounds):
            rows, seconds, first = http_run(client, params)
            http.append(rows / seconds)
            firsts.append(first)
            log(f"  round {n + 1}: endpoint {rows:,} rows in {seconds:.2f} s = {rows / seconds:,.0f} rows/s "
                f"(first byte {first * 1000:.0f} ms, server peak {peak_mb(pid):.1f} MB)")  # fmt: skip
            if rows != args.rows:
                raise SystemExit(f"the endpoint sent {rows:,} rows, expected {args.rows:,}")
            rows, seconds = psql_run(env["DATABASE_URL"], select)
            psql.append(rows / seconds)
            log(f"  round {n + 1}: psql     {rows:,} rows in {seconds:.2f} s = {rows / seconds:,.0f} rows/s")
        peak = peak_mb(pid)
        client.close()
    ours, theirs = statistics.median(http), statistics.median(psql)
    ratio = ours / theirs
    print(f"\nexport of {args.rows:,} measurements, median of {args.rounds}")
    print(f"  endpoint over HTTP : {ours:>12,.0f} rows/s  (first byte after {statistics.median(firsts) * 1000:.0f} ms)")
    print(f"  psql \\copy          : {theirs:>12,.0f} rows/s")
    print(f"  ratio              : {ratio:.2f}x  {'PASS' if ratio >= GOAL_RATIO else 'MISS'} (goal >= {GOAL_RATIO}x)")
    print(
        f"  server peak RSS    : {peak:.1f} MB  {'PASS' if peak < GOAL_PEAK_MB else 'MISS'}"
        f" (goal < {GOAL_PEAK_MB:.0f} MB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
