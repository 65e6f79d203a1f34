#!/usr/bin/env python
"""How much disk does a measurement take? Bytes per stored measurement, its indexes included, and per
hourly rollup row and series rollup block: the figures behind the sizing in docs/guides/deploy.md.

N realistic measurements (default 100,000; outcomes, failures and phases from bench/workload.py's
generator) from P probes x every seeded region, one slot every --interval seconds, ending at the last
full hour, are stored the way the ingest worker stores them (probes.ingest.store, batches of 500, in
time order as they arrive) and rolled up the way the maintenance queue does (probes.rollups.rebuild_range);
then VACUUM ANALYZE, and the sizes PostgreSQL reports: pg_relation_size (the table), pg_indexes_size,
pg_total_relation_size (table + indexes + TOAST), summed over the partitions of a partitioned table (the raw
measurements: probes.partitions) and each divided by the table's rows. Unlike bench/dashboard.py, which builds
the indexes after its load, the indexes here grew row by row as ingest grows them.

Rollup rows grow with the samples they hold (more distinct histogram buckets), so their size depends on
the interval: run it with the interval you plan (--interval 10 for 360 samples per probe-region-hour).

Everything happens in its own database (latency_rowsize, created with `manage.py ensuredb` and migrated;
its measurements and rollups are emptied before and after) and its own Redis database (/13, for the live
broadcasts ingest sends).

    .venv/bin/python -m devtools.embedded run -- .venv/bin/python bench/row_size.py [--count 100000]
        [--probes 6] [--interval 60] [--json]

Exit status 0 when it measured, 1 when it could not run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from devtools import harness  # noqa: E402
from devtools.harness import BenchError, machine_context, manage  # noqa: E402

BENCH_DB = "latency_rowsize"
BENCH_REDIS_DB = 13  # the suite uses 15, bench/ingest.py 14
CHANNEL_PREFIX = "latency-rowsize"
BATCH = 500  # the ingest worker's batch (probes.tasks)
STYLES = ("openai", "anthropic", "gemini", "openai", "anthropic", "http")


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def bench_env(db_name: str) -> dict[str, str]:
    return harness.bench_env(db_name, channel_prefix=CHANNEL_PREFIX, redis_db=BENCH_REDIS_DB)


def seed(probes: int, interval: int) -> tuple[list[tuple[int, int, bool]], list[tuple[int, str]]]:
    """Bench targets and probes, one per target, from every region: (probe, target, plain HTTP) and regions."""
    from workload import bench_target  # bench/workload.py: the ingest bench's targets, named for this bench

    from probes.models import Probe, Region

    regions = list(Region.objects.order_by("id").values_list("id", "slug"))
    if not regions:
        raise BenchError("no regions in the bench database (the seed migration did not run?)")
    out = []
    for i in range(probes):
        style = STYLES[i % len(STYLES)]
        target = bench_target("rowsize", i, style)
        probe, _ = Probe.objects.update_or_create(
            target=target,
            name=f"rowsize-probe-{i}",
            defaults={"interval_seconds": interval, "timeout_seconds": min(30, interval - 2)},
        )
        probe.regions.set([r for r, _ in regions])
        out.append((probe.id, target.id, style == "http"))
    return out, regions


def batches(count: int, probes, regions, interval: int, seed_value: int):
    """Payloads in arrival order, BATCH at a time: every (probe, region) of a slot, slot after slot, the
    last slot just before the last full hour."""
    from workload import make_result  # bench/workload.py: the realistic outcomes and phases

    rng = random.Random(seed_value)
    pairs = [(p, t, http, r, slug) for p, t, http in probes for r, slug in regions]
    slots = math.ceil(count / len(pairs))
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    first = end - timedelta(seconds=interval * slots)
    batch: list[dict] = []
    made = 0
    for k in range(slots):
        slot = first + timedelta(seconds=interval * k)
        for probe_id, target_id, http, region_id, slug in pairs:
            if made == count:
                break
            started = slot + timedelta(microseconds=rng.randint(0, 900_000))
            batch.append(
                {
                    "probe_id": probe_id,
                    "target_id": target_id,
                    "region_id": region_id,
                    "scheduled_for": slot.isoformat(),
                    "worker": f"region-{slug}@worker-1",
                    "result": make_result(rng, started, http),
                }
            )
            made += 1
            if len(batch) == BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def empty_tables() -> None:
    from django.db import connection

    from probes.models import (
        DeadLetter,
        HourlyRollup,
        Measurement,
        RegionRollup,
        RollupHour,
        SeriesBlockMark,
        SeriesRollup,
    )

    tables = [
        m._meta.db_table
        for m in (Measurement, HourlyRollup, RegionRollup, SeriesRollup, SeriesBlockMark, RollupHour, DeadLetter)
    ]
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY")


def sizes(model, empty: dict | None = None) -> dict:
    """The table's sizes after VACUUM ANALYZE; with `empty` (its sizes when it held no row: a page or two
    per index, the TOAST table's index), per-row figures are marginal, the fixed part left out, so a small
    table (a few hundred series blocks) does not look dearer per row than it will be at scale."""
    from django.db import connection

    table = model._meta.db_table
    with connection.cursor() as cur:
        cur.execute(f"VACUUM ANALYZE {table}")
        cur.execute(f"SELECT count(*) FROM {table}")
        rows = cur.fetchone()[0]
        # A partitioned table and its indexes hold no pages of their own (size 0): the sizes are their leaf
        # partitions'. pg_partition_tree lists nothing for a plain table or index, hence the relation itself too.
        cur.execute(
            "SELECT sum(pg_relation_size(r)), sum(pg_indexes_size(r)), sum(pg_total_relation_size(r)) FROM "
            "(SELECT relid AS r FROM pg_partition_tree(%(t)s::regclass) WHERE isleaf UNION SELECT %(t)s::regclass) s",
            {"t": table},
        )
        heap, indexes, total = (int(value or 0) for value in cur.fetchone())
        cur.execute(
            # Every fork (a BRIN index keeps a free space map), as pg_indexes_size counts them.
            "SELECT i.indexrelid::regclass::text, sum(pg_total_relation_size(t.r))::bigint FROM pg_index i "
            "CROSS JOIN LATERAL (SELECT relid AS r FROM pg_partition_tree(i.indexrelid) WHERE isleaf "
            "UNION SELECT i.indexrelid) t WHERE i.indrelid = %s::regclass GROUP BY 1 ORDER BY 2 DESC",
            [table],
        )
        each = dict(cur.fetchall())
    base = empty or {"heap_bytes": 0, "index_bytes": 0, "total_bytes": 0, "each": {}}

    def per(key: str, value: int) -> float | None:
        return round((value - base[key]) / rows, 1) if rows else None

    return {
        "table": table,
        "rows": rows,
        "heap_bytes": heap,
        "index_bytes": indexes,
        "total_bytes": total,
        "each": each,
        "heap_per_row": per("heap_bytes", heap),
        "index_per_row": per("index_bytes", indexes),
        "total_per_row": per("total_bytes", total),
        "indexes_per_row": {
            name: round((b - base["each"].get(name, 0)) / rows, 1) if rows else None for name, b in each.items()
        },
    }


def measure(count: int, n_probes: int, interval: int, seed_value: int) -> dict:
    from django.db import connection

    from probes.ingest import store
    from probes.models import HourlyRollup, Measurement, SeriesRollup
    from probes.rollups import floor_hour, rebuild_range

    empty_tables()
    empty = {model: sizes(model) for model in (Measurement, HourlyRollup, SeriesRollup)}
    probes, regions = seed(n_probes, interval)
    t0 = time.perf_counter()
    stored = 0
    first = last = None
    for batch in batches(count, probes, regions, interval, seed_value):
        stored += len(store(batch))
        first = first or batch[0]["scheduled_for"]
        last = batch[-1]["scheduled_for"]
    store_s = time.perf_counter() - t0
    log(f"  stored {stored:,} measurements in {store_s:.1f} s")
    since, until = datetime.fromisoformat(first), datetime.fromisoformat(last) + timedelta(hours=1)
    t0 = time.perf_counter()
    hours, rollups = rebuild_range(floor_hour(since), floor_hour(until))
    log(f"  rolled up {hours} hours ({rollups:,} probe-region rollups) in {time.perf_counter() - t0:.1f} s")
    with connection.cursor() as cur:
        cur.execute("SELECT current_setting('server_version')")
        version = cur.fetchone()[0]
    failures = Measurement.objects.exclude(outcome="ok").count()
    return {
        "count": stored,
        "failures": failures,
        "probes": n_probes,
        "regions": len(regions),
        "interval_s": interval,
        "span_hours": round((datetime.fromisoformat(last) - since).total_seconds() / 3600 + interval / 3600, 1),
        "postgres": version,
        "measurement": sizes(Measurement, empty[Measurement]),
        "hourly": sizes(HourlyRollup, empty[HourlyRollup]),
        "series": sizes(SeriesRollup, empty[SeriesRollup]),
    }


def series_blocks_per_day() -> float:
    """Series rollup blocks one (probe, region) of one target adds per day: every grain of the catalogue's series
    kinds, 24 / grain a day each."""
    from probes.rollups.catalogue import KINDS

    return sum(24 / grain for kind in KINDS if kind.model == "SeriesRollup" for grain in kind.grains)


def rollup_bytes_per_day(result: dict) -> float:
    """Rollup bytes one (probe, region) adds per day: 24 hourly rows and its series blocks (a short run may hold no
    block yet: then the hourly rows alone). Region blocks are per region, not per probe, and left out."""
    block = result["series"]["total_per_row"] or 0.0
    return 24 * result["hourly"]["total_per_row"] + series_blocks_per_day() * block


def projection(result: dict, probes: int, regions: int, interval: int, retention_days: int) -> dict:
    """Rows per day and disk for a deployment, from the measured bytes per row."""
    pairs = probes * regions
    rows_per_day = pairs * 86400 / interval
    raw = rows_per_day * retention_days * result["measurement"]["total_per_row"]
    rollups_per_month = pairs * 30 * rollup_bytes_per_day(result)
    return {
        "probes": probes,
        "regions": regions,
        "interval_s": interval,
        "rows_per_day": round(rows_per_day),
        "raw_gb_at_retention": round(raw / 1e9, 2),
        "rollups_mb_per_month": round(rollups_per_month / 1e6, 1),
    }


def report(result: dict, projections: list[dict], retention_days: int) -> None:
    m, h, d = result["measurement"], result["hourly"], result["series"]
    print(
        f"row size bench: {result['count']:,} measurements ({result['failures']:,} failures) from "
        f"{result['probes']} probes x {result['regions']} regions every {result['interval_s']} s "
        f"({result['span_hours']} h), PostgreSQL {result['postgres']}, after VACUUM ANALYZE;"
    )
    print("bytes per row are marginal: the size of the empty table (a page or two per index) left out")
    print()
    print(f"{'table':<24} {'rows':>9} {'table B/row':>12} {'indexes B/row':>14} {'total B/row':>12} {'total MB':>9}")
    for s in (m, h, d):
        print(
            f"{s['table']:<24} {s['rows']:>9,} {_n(s['heap_per_row']):>12} {_n(s['index_per_row']):>14} "
            f"{_n(s['total_per_row']):>12} {s['total_bytes'] / 1e6:>9.1f}"
        )
    print()
    print("indexes of the measurement table, bytes per row: " + ", ".join(
        f"{name} {_n(b)}" for name, b in m["indexes_per_row"].items()
    ))  # fmt: skip
    print()
    print(f"per (probe, region) at this interval: {86400 / result['interval_s']:,.0f} rows/day = "
          f"{86400 / result['interval_s'] * m['total_per_row'] / 1e6:.2f} MB/day raw; rollups "
          f"{rollup_bytes_per_day(result) / 1e3:.1f} kB/day")  # fmt: skip
    print()
    print(f"rows/day = probes x regions x 86400 / interval; raw disk = rows/day x {retention_days} days retention "
          f"x {m['total_per_row']:.0f} B; rollups kept (LATENCY_ROLLUP_RETENTION_DAYS=0)")  # fmt: skip
    print(f"{'probes':>6} {'regions':>7} {'interval':>8} {'rows/day':>11} {'raw GB':>8} {'rollups MB/month':>17}")
    for p in projections:
        print(
            f"{p['probes']:>6} {p['regions']:>7} {p['interval_s']:>7}s {p['rows_per_day']:>11,} "
            f"{p['raw_gb_at_retention']:>8.2f} {p['rollups_mb_per_month']:>17.1f}"
        )


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="measurements to store (default 100000)")
    parser.add_argument("--probes", type=int, default=6, help="probes, one per target, from every region (default 6)")
    parser.add_argument("--interval", type=int, default=60, help="seconds between a probe's runs (default 60)")
    parser.add_argument("--retention-days", type=int, default=30, help="raw retention for the projection")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the measurements")
    parser.add_argument("--db-name", default=BENCH_DB, help=f"the bench's own database (default {BENCH_DB})")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args()
    if args.count < BATCH or args.probes < 1 or args.interval < 10:
        parser.error(f"--count must be at least {BATCH}, --probes at least 1, --interval at least 10")

    try:
        env = bench_env(args.db_name)
        log(f"row size bench: database {env['DATABASE_URL']}")
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput", "-v", "0", timeout=300)
    except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
        log(f"row size bench: {exc}")
        return 1
    os.environ.update(env)
    import django

    django.setup()
    from django.db import connection

    try:
        result = measure(args.count, args.probes, args.interval, args.seed)
    except BenchError as exc:
        log(f"row size bench: {exc}")
        return 1
    finally:
        try:
            empty_tables()
        finally:
            connection.close()
    # At the measured interval only: rollup rows grow with the samples per hour.
    projections = [
        projection(result, probes, regions, args.interval, args.retention_days)
        for probes, regions in ((1, 15), (6, 15), (20, 15), (50, 30))
    ]
    if args.json:
        out = {**result, "machine": machine_context(), "retention_days": args.retention_days}
        print(json.dumps({**out, "projections": projections}, indent=2))
    else:
        report(result, projections, args.retention_days)
    return 0


if __name__ == "__main__":
    sys.exit(main())
