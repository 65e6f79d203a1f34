#!/usr/bin/env python
"""How fast are rollups (hourly rows and every kind of block over them) built from raw measurements?

Data: its own database, latency_rollupbench (created with `manage.py ensuredb`, migrated every run): 60 bench
targets, one probe each over the 15 seeded regions (900 series, foreign keys as in production), --rows measurements
(10,000,000) spread evenly over the --days (60) UTC days that end at today's midnight, loaded inside PostgreSQL with
INSERT ... SELECT FROM generate_series. Latencies log-normal per series; 3% failures over three outcomes, without
timings; DNS, connect and TLS only on cold connections (NULL on warm ones), like real rows. Kept between runs when
the table already holds exactly that load (--reload forces it), then VACUUM ANALYZE.

Measured in one process:
  (a) the SQL builder (probes.rollups.rebuild_range) over the whole range from no rollups, --repeats times,
      --workers days at once (2, as `manage.py rollup`): every hourly rollup, every block merged and every mark;
      rows per second of raw rows rolled up. Its statements set work_mem (128 MB: a day's sort stays in memory)
      and jit (off) locally; parallel workers cannot serve an INSERT, hence days side by side on connections of
      their own;
  (b) the Python reference (devtools/rollup_reference.py: the builder this replaced) on one day, for the ratio;
  (c) on the last day, one core: the SQL builder alone (rebuild_range, one worker), beside the least any SQL
      rollup of that day must do (floor_sql: its raw rows scanned, grouped per probe, region and hour, every
      metric's bucket computed by width_bucket and gathered per group, nothing counted into histograms or written).
      Their ratio is the share of the builder's time that forming and writing the histograms, ranks and region
      blocks takes, which no reformulation of the scan can remove. And the same floor with each group's histograms
      counted and packed by the builder's own subquery (still nothing written): times the cores, the most any SQL
      builder of these histograms could roll up here.
Medians, the machine's load, and PASS/MISS against the goal: at least 1,000,000 rows/s, and 60 days of 10 M rows in
under 30 s.

    .venv/bin/python bench/rollup.py [--rows 10000000] [--days 60] [--workers 2] [--repeats 3] [--reload] [--json]

on the machine's PostgreSQL (DATABASE_URL's server, devtools.harness.bench_env); a quick run: --rows 1000000.

Exit status: 0 when the benchmark ran (see PASS/MISS), 1 when it could not run.
"""

from __future__ import annotations

import argparse
import json
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

BENCH_DB = "latency_rollupbench"
TARGETS = 60
REGIONS = 15
GOAL_ROWS_PER_S = 1_000_000
GOAL_60_DAYS_S = 30.0


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def series() -> list[tuple[int, int, int, float]]:
    """(probe, target, region, base latency) of the 900 bench series, created when missing."""
    from probes.models import Probe, Region, Target

    regions = list(Region.objects.order_by("id")[:REGIONS])
    if len(regions) < REGIONS:
        raise BenchError(f"expected the {REGIONS} seeded regions, found {len(regions)}")
    pairs = []
    for i in range(TARGETS):
        target, _ = Target.objects.get_or_create(
            name=f"rollupbench-{i}",
            defaults={
                "api_style": "openai",
                "url": f"https://bench-{i}.invalid/v1/chat/completions",
                "model": "bench-model",
                "api_key_env": "BENCH_API_KEY",
            },
        )
        probe, created = Probe.objects.get_or_create(target=target, name="rollupbench")
        if created:
            probe.regions.set(regions)
        pairs += [(probe.id, target.id, r.id, 120.0 + 7 * i + 11 * j) for j, r in enumerate(regions)]
    return pairs


def prepare(rows: int, days: int, reload: bool) -> dict:
    """The bench's rows over [start, end); reloaded only when they are not exactly what was asked for."""
    from django.db import connection

    from probes.models import HourlyRollup, Measurement, RollupHour, SeriesBlockMark, SeriesRollup

    pairs = series()
    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = end - timedelta(days=days)
    # The same slots every day for every series, so each day holds rows / days.
    per_day = max(1, round(rows / (days * len(pairs))))
    step = 86400 / per_day
    table = Measurement._meta.db_table
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*), min(scheduled_for), max(scheduled_for) FROM {table}")
        have, first, last = cur.fetchone()
        wanted = per_day * days * len(pairs)
        if not reload and have == wanted and first == start and last is not None and last < end:
            return {"rows": have, "load_s": None, "start": start, "end": end, "series": len(pairs)}
        log(f"rollup bench: loading {wanted:,} rows over {days} days ({len(pairs)} series, a slot every {step:.0f} s)")
        for model in (HourlyRollup, RollupHour, SeriesRollup, SeriesBlockMark):
            cur.execute(f"TRUNCATE {model._meta.db_table}")
        cur.execute(f"TRUNCATE {table}")
        harness.ensure_day_partitions(start, end)
        values = ", ".join(f"({p}, {t}, {r}, {b})" for p, t, r, b in pairs)
        t0 = time.perf_counter()
        # Day by day: one statement per day keeps each statement's memory bounded.
        for day in range(days):
            cur.execute(
                f"""
                INSERT INTO {table} (probe_id, target_id, region_id, scheduled_for, started_at, worker, ingested_at,
                    outcome, connection, dns_ms, connect_ms, tls_ms, ttfb_ms, ttft_ms, ttfat_ms, total_ms,
                    tokens_per_s, http_status, output_tokens)
                SELECT probe_id, target_id, region_id, s, s + interval '0.3 s', 'bench', s,
                    CASE WHEN f < 0.97 THEN 'ok' WHEN f < 0.985 THEN 'timeout' WHEN f < 0.995 THEN 'http_error'
                         ELSE 'connect_error' END,
                    CASE WHEN cold THEN 'cold' ELSE 'warm' END,
                    CASE WHEN cold AND f < 0.97 THEN 2.0 + random() * 30 END,
                    CASE WHEN cold AND f < 0.97 THEN base / 10 * (0.5 + random()) END,
                    CASE WHEN cold AND f < 0.97 THEN base / 5 * (0.5 + random()) END,
                    CASE WHEN f < 0.97 THEN base / 2 + ttft / 4 END,
                    CASE WHEN f < 0.97 THEN base + ttft END,
                    CASE WHEN f < 0.97 THEN base + ttft + 3 * random() END,
                    CASE WHEN f < 0.97 THEN base + ttft + 400 + 800 * random() END,
                    CASE WHEN f < 0.97 THEN 20 + 180 * random() END,
                    CASE WHEN f < 0.97 THEN 200 WHEN f < 0.995 THEN 503 END,
                    CASE WHEN f < 0.97 THEN 48 END
                FROM (
                    SELECT p.*, s, random() AS f, random() < 0.2 AS cold,
                           base * exp(0.6 * (random() + random() + random() - 1.5)) AS ttft
                    FROM (VALUES {values}) AS p(probe_id, target_id, region_id, base)
                    CROSS JOIN generate_series(0, %s - 1) AS n
                    CROSS JOIN LATERAL (SELECT %s::timestamptz + n * %s * interval '1 second' AS s) AS slot
                ) x
                """,
                [per_day, start + timedelta(days=day), step],
            )
        load_s = time.perf_counter() - t0
        cur.execute(f"VACUUM ANALYZE {table}")
        cur.execute(f"SELECT count(*) FROM {table}")
        (have,) = cur.fetchone()
    return {"rows": have, "load_s": load_s, "start": start, "end": end, "series": len(pairs)}


def time_sql(start: datetime, end: datetime, repeats: int, workers: int) -> tuple[list[float], int, int]:
    """Seconds of each rebuild_range over the whole range, and (hours, rollups) written by the last. Each run
    starts from no rollups at all, as the first rollup of an installation's history does (a rerun over the
    previous run's rows would also measure their dead versions)."""
    from django.db import connection

    from probes.models import HourlyRollup, RollupHour, SeriesBlockMark, SeriesRollup
    from probes.rollups import rebuild_range

    times = []
    for _ in range(repeats):
        with connection.cursor() as cur:
            tables = ", ".join(m._meta.db_table for m in (HourlyRollup, RollupHour, SeriesRollup, SeriesBlockMark))
            cur.execute(f"TRUNCATE {tables}")
        t = time.perf_counter()
        hours, written = rebuild_range(start, end, workers=workers)
        times.append(time.perf_counter() - t)
    return times, hours, written


def time_python(day: datetime, repeats: int) -> tuple[list[float], int]:
    """Seconds of the Python reference over one day (reading and bucketing only: it writes nothing, so this is
    less than the old builder took)."""
    sys.path.insert(0, str(ROOT))
    from devtools.rollup_reference import reference_rollups

    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        groups = reference_rollups(day, day + timedelta(days=1))
        times.append(time.perf_counter() - t)
    return times, len(groups)


def floor_sql(histograms: bool = False) -> str:
    """The floors of (c): _hourly_sql's scan, grouping and bucketing of one day's raw rows (the builder's own SQL for
    a row's bucket indexes), and no more; with histograms=True, also each group's histograms counted and packed by the
    builder's own subquery (build.histograms_sql), still nothing written. Sizes summed, so that PostgreSQL cannot drop
    the aggregates as unused."""
    from probes.metrics import HISTOGRAM
    from probes.models import Measurement
    from probes.rollups.build import bucket_row_sql, histograms_sql

    # Every histogram's length summed: PostgreSQL drops a subquery's outputs nobody reads, aggregates included.
    counted = f"CROSS JOIN LATERAL {histograms_sql('g.buckets')} AS h" if histograms else ""
    sizes = " + ".join(f"length(h.{m.rollup_field})" for m in HISTOGRAM) if histograms else "0"
    return f"""
        SELECT count(*), sum(samples), sum(cardinality(buckets)), sum({sizes}) FROM (
            SELECT count(*) AS samples, array_agg({bucket_row_sql("m")}) AS buckets
            FROM {Measurement._meta.db_table} m
            WHERE started_at >= %(since)s AND started_at < %(until)s
              AND scheduled_for >= %(low)s AND scheduled_for < %(high)s
            GROUP BY probe_id, region_id, date_trunc('hour', started_at, 'UTC')
        ) g {counted}
    """


def time_one_day(day: datetime, repeats: int) -> tuple[list[float], list[float], list[float]]:
    """Seconds of (c) on one day, each run: the builder alone over the day (its rollups rebuilt in place),
    floor_sql over the same rows, and floor_sql with histograms; with the builder's own settings (work_mem, jit)."""
    from django.db import connection, transaction

    from probes.histogram import SQL_EDGES
    from probes.rollups import rebuild_range
    from probes.slot_time import slot_bounds

    end = day + timedelta(days=1)
    low, high = slot_bounds(day, end)
    builder, floor, counted = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        rebuild_range(day, end, workers=1)
        builder.append(time.perf_counter() - t)
        for histograms, times in ((False, floor), (True, counted)):
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL work_mem = '128MB'")
                cur.execute("SET LOCAL jit = off")
                t = time.perf_counter()
                cur.execute(
                    floor_sql(histograms), {"since": day, "until": end, "low": low, "high": high, "edges": SQL_EDGES}
                )
                cur.fetchall()
                times.append(time.perf_counter() - t)
    return builder, floor, counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="days rebuilt at once (rebuild_range's workers)")
    parser.add_argument("--reload", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        env = harness.bench_env(BENCH_DB, channel_prefix="latency-rollupbench")
        os.environ.update(env)
        import django

        django.setup()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput")
        data = prepare(args.rows, args.days, args.reload)
        if data["load_s"] is not None:
            log(f"rollup bench: {data['rows']:,} rows loaded in {data['load_s']:.1f} s")
        log(f"rollup bench: SQL builder over {args.days} days, {args.repeats} times, {args.workers} days at once")
        sql_s, hours, written = time_sql(data["start"], data["end"], args.repeats, args.workers)
        day = data["end"] - timedelta(days=1)
        log("rollup bench: Python reference over one day")
        python_s, groups = time_python(day, args.repeats)
        log("rollup bench: the SQL builder and the floor over one day, one core")
        day_builder_s, day_floor_s, day_counted_s = time_one_day(day, args.repeats)
    except BenchError as exc:
        log(f"rollup bench: {exc}")
        return 1

    from probes.models import Measurement

    day_rows = Measurement.objects.filter(started_at__gte=day, started_at__lt=data["end"]).count()
    sql_median = statistics.median(sql_s)
    python_median = statistics.median(python_s)
    sql_rate = data["rows"] / sql_median
    python_rate = day_rows / python_median
    # The goal's 60 days of 10 M rows, at the rate measured.
    projected = 10_000_000 / sql_rate
    result = {
        "data": {k: str(v) if isinstance(v, datetime) else v for k, v in data.items()},
        "sql": {
            "workers": args.workers,
            "seconds": sql_s,
            "median_s": sql_median,
            "rows_per_s": sql_rate,
            "hours": hours,
            "rollups": written,
        },
        "python_one_day": {
            "seconds": python_s,
            "median_s": python_median,
            "rows": day_rows,
            "rows_per_s": python_rate,
            "rollups": groups,
        },
        "ratio": sql_rate / python_rate,
        "one_day_one_core": {
            "rows": day_rows,
            "builder_s": day_builder_s,
            "builder_rows_per_s": day_rows / statistics.median(day_builder_s),
            "floor_s": day_floor_s,
            "floor_rows_per_s": day_rows / statistics.median(day_floor_s),
            "builder_over_floor": statistics.median(day_builder_s) / statistics.median(day_floor_s),
            "histograms_floor_s": day_counted_s,
            "histograms_floor_rows_per_s": day_rows / statistics.median(day_counted_s),
        },
        "sixty_days_of_10m_s": projected,
        "machine": harness.machine_context(),
    }
    result["pass"] = sql_rate >= GOAL_ROWS_PER_S and projected < GOAL_60_DAYS_S
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(f"data: {data['rows']:,} measurements over {args.days} days, {data['series']} series")
        print(
            f"SQL builder, whole range, {args.workers} days at once: median {sql_median:7.2f} s  "
            f"({sql_rate:,.0f} rows/s; "
            f"{hours} hours, {written:,} hourly rollups; runs {', '.join(f'{t:.2f}' for t in sql_s)} s)"
        )
        print(
            f"Python reference, one day:                median {python_median:7.2f} s  ({python_rate:,.0f} rows/s over "
            f"{day_rows:,} rows; runs {', '.join(f'{t:.2f}' for t in python_s)} s)"
        )
        print(f"SQL / Python rate: {result['ratio']:.1f}x")
        one = result["one_day_one_core"]
        print(
            f"one day, one core: SQL builder {one['builder_rows_per_s']:,.0f} rows/s, floor (scan, group, bucket) "
            f"{one['floor_rows_per_s']:,.0f} rows/s; the builder takes {one['builder_over_floor']:.1f}x the floor's "
            f"time (runs {', '.join(f'{t:.2f}' for t in day_builder_s)} and "
            f"{', '.join(f'{t:.2f}' for t in day_floor_s)} s)"
        )
        # No SQL rollup can outrun its own histograms: counted on every core at this rate, and with nothing
        # written, this is the most any such builder could reach here.
        ceiling = one["histograms_floor_rows_per_s"] * result["machine"]["usable_cpus"]
        print(
            f"one day, one core: the floor with the histograms counted (nothing written) "
            f"{one['histograms_floor_rows_per_s']:,.0f} rows/s (runs {', '.join(f'{t:.2f}' for t in day_counted_s)} s);"
            f" on every core at once, at most {ceiling:,.0f} rows/s for any SQL builder of these histograms"
        )
        machine = result["machine"]
        print(f"machine: {machine['usable_cpus']} CPUs, load average {machine['loadavg']} at the end")
        verdict = "PASS" if result["pass"] else "MISS"
        print(
            f"goal: >= {GOAL_ROWS_PER_S:,} rows/s and 60 days of 10 M rows under {GOAL_60_DAYS_S:.0f} s: {verdict} "
            f"({sql_rate:,.0f} rows/s; 10 M rows in {projected:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
