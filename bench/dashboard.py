#!/usr/bin/env python
"""How fast does the dashboard answer over 10 or 100 million measurements, and how fast does a new one show?

Data (bench/dashboard_load.py): --rows measurements (default 10,000,000) from the midnight --days (60) before now
until now, 15 regions (the seeded ones) x 60 bench targets (six profiles placed at ten places with their own
medians; one probe each), loaded with INSERT ... SELECT FROM generate_series inside PostgreSQL, a day of slots per
statement in time order (as ingest writes them), foreign-key triggers off and secondary indexes dropped for the
load, rebuilt after it. When probes_measurement is partitioned, the day partitions are made before the load
(probes.partitions). TTFT is log-normal per (region, target) on top of a distance floor (probes.geo.path_floor_ms x
1.5 route inflation, plus DNS/TCP/TLS round trips on cold connections), with a daily cycle; 2% of runs fail
(http_error, timeout, upstream_error, connect_error, truncated) with the phases a failure of that kind has. Then
VACUUM ANALYZE and `manage.py rollup --since 61d`, both timed. Printed: load time and rows/s, index build, rollup
time, and MiB on disk per million rows of the raw heap (summed over partitions), its indexes, and the hourly, region and
series rollups. Before a load, the disk it needs is estimated from the per-million figures and the load refused when
it would take more than 80% of the free space of PostgreSQL's data directory (SHOW data_directory).

The data lives in its own database, latency_dashbench (created with `manage.py ensuredb`, migrated every run),
and is reused by later runs: they only append the slots that came due since (and roll their hours up), so the
1 h window always has data; another --rows (10% off the data's) empties the tables and loads again, after the
disk check measured on the rows there. --reload drops the database and loads again. The bench refuses the
dev database `latency` and test databases (test_*). Channel layer: Redis database 13, prefix latency-dashbench.

Reads (bench/dashboard_reads.py), against `uvicorn latency.asgi:application` over HTTP with a session from the
login form: /api/overview, /api/histograms, /api/timeseries, /api/phases, /api/table for windows 1h, 24h, 7d, 30d,
for one target and target=all. Cold: uvicorn is restarted before each cell (--cold restarts per cell, their first
request each); warm: --requests (20) after --warmups (2), in the first restart. The OS page cache and PostgreSQL's
shared buffers are not dropped (no root): cold is a fresh application process, not a cold disk. Also
/export/regions.csv?since=30d&bucket=1h (goal < 2 s) and the region page (goal < 150 ms). Goal for every endpoint:
p95 < 150 ms, cold and warm. The machine's load average is printed with the table.

Plans (bench/dashboard_plans.py): for each endpoint at 30 d all targets and 1 h one target (and regions.csv), its
SQL captured in process, each statement timed, EXPLAIN (ANALYZE, BUFFERS) of the slowest, and each statement's
EXPLAIN (FORMAT JSON) checked for partitions of probes_measurement outside the window's slot range.

Upkeep (bench/dashboard_upkeep.py): retention of the oldest day through probes.rollups.prune.prune_raw (time, rows
dropped; the data is a day shorter afterwards), and --ingest N measurements stored in process through
probes.ingest, alone and while a thread loops 30-day all-target reads over HTTP (both rates and their ratio).

Rollup layers (--without region,series_days,...: names of probes.rollups.catalogue.SWITCHABLE): each read cell is
measured again, right after its measurement with every layer, with uvicorn's readers doing without that layer
(bench/rollups_off_settings.py sets LATENCY_ROLLUPS_OFF; the tilers fall back on the finer kinds), and a table of
p95 with and without and their ratio is printed: a layer whose ratio stays near 1 on every cell is not worth keeping.

Live: headless Chromium (Playwright, /usr/bin/chromium) signs in and opens the overview; 10 times, a measurement
is inserted with the ORM (committed), announced with probes.live.broadcast, and timed from the commit to the
first animation frame after #live-count shows its id (a MutationObserver in the page; both clocks are this
machine's wall clock). Goal: median <= 1 s.

    .venv/bin/python bench/dashboard.py [--rows 10000000] [--days 60] [--reload] [--rollup] [--requests 20]
        [--warmups 2] [--cold 1] [--cells 30d:all,7d:one,csv,region] [--without region,series_days,...]
        [--ingest 20000] [--load-workers 2]
        [--skip-http] [--skip-plans] [--skip-retention] [--skip-ingest] [--skip-live] [--json]

A first run loads, indexes and rolls up its rows and starts a server per cell, so it is by far the longest; later
runs reuse the data. Goal of a full rollup at 100 M rows: >= 1 million rows/s. Exit status: 0 when the benchmark
ran (see PASS/MISS), 1 when it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

# The names bench/alerts.py reuses (the same data, database and environment) stay importable from here.
from dashboard_common import BENCH_DB, PASSWORD, USERNAME, bench_env, log, percentile  # noqa: E402, F401
from dashboard_load import drop_database, layout_changed, load_interrupted, prepare_data, seed_config  # noqa: E402, F401

from devtools.harness import BenchError, manage  # noqa: E402

GOAL_LIVE_MS = 1000.0
# Issue 17: a full rebuild (`manage.py rollup --since 61d` after a load) rolls up at least this many raw rows a second.
GOAL_ROLLUP_ROWS_PER_S = 1_000_000.0
LIVE_SAMPLES = 10


# --- live ---------------------------------------------------------------------------------------------------

OBSERVE_JS = """() => {
  window.__liveSeen = {};
  const el = document.querySelector('#live-count');
  if (!el) return false;
  new MutationObserver(() => {
    const id = el.dataset.lastId;
    if (id && !(id in window.__liveSeen)) {
      window.__liveSeen[id] = null;
      // The first animation frame after the change: the frame that paints it.
      requestAnimationFrame(() => { window.__liveSeen[id] = performance.timeOrigin + performance.now(); });
    }
  }).observe(el, {attributes: true, childList: true, characterData: true, subtree: true});
  return true;
}"""


def measure_live(origin: str, data: dict, samples: int) -> dict:
    from devtools.harness import attach_recorder, launch_chromium, live_item, login, outside_browser_loop, wait_until

    def store_and_announce(n: int) -> tuple[int, float]:
        from probes import live
        from probes.models import Measurement

        now = datetime.now(UTC)
        row = Measurement.objects.create(
            probe=data["probe"],
            target=data["target"],
            region=data["regions"][n % len(data["regions"])],
            scheduled_for=now,
            started_at=now,
            worker="dashbench-live",
            outcome="ok",
            connection="warm",
            http_status=200,
            ttfb_ms=210.0 + n,
            first_event_ms=211.0 + n,
            ttft_ms=300.0 + n,
            ttfat_ms=300.0 + n,
            total_ms=900.0 + n,
            output_tokens=50,
            tokens_estimated=False,
            tokens_per_s=80.0,
        )
        committed = time.time()  # autocommit: the INSERT is committed when create() returns
        live.broadcast([live_item(row)])
        return row.id, committed

    with launch_chromium() as context:
        page = context.new_page()
        rec = attach_recorder(page)
        login(page, origin, USERNAME, PASSWORD)
        if not page.query_selector("#live-count"):
            page.goto(f"{origin}/")
        wait_until(
            page,
            lambda: any("/ws/measurements/" in u for u in rec.websockets_open),
            15,
            "the overview's websocket to open",
        )
        if not page.evaluate(OBSERVE_JS):
            raise BenchError("no #live-count on the overview page")
        page.wait_for_timeout(1500)  # let the first chart loads finish
        delays = []
        for n in range(samples):
            mid, committed = outside_browser_loop(store_and_announce, n)
            page.wait_for_function("(id) => window.__liveSeen && window.__liveSeen[id]", arg=str(mid), timeout=10_000)
            shown = page.evaluate("(id) => window.__liveSeen[id]", str(mid))
            delays.append(shown - committed * 1000)
            page.wait_for_timeout(1200)  # the page refetches its charts after each message; let it settle
        navigations = len(rec.navigations)
    return {
        "delays_ms": delays,
        "median_ms": statistics.median(delays),
        "max_ms": max(delays),
        "page_errors": rec.page_errors,
        "navigations": navigations,
    }


# --- report -------------------------------------------------------------------------------------------------


def print_data(data: dict, timings: dict) -> None:
    print()
    print(
        f"Dashboard bench: {data['rows']:,} measurements, newest {data['newest']:%Y-%m-%d %H:%M:%S} UTC,"
        f" {'partitioned' if data['partitioned'] else 'not partitioned'}"
    )
    for key, value in timings.items():
        if key == "disk_check":
            print(
                f"  disk check: need {value['need_bytes'] / 2**30:.1f} GiB"
                f" of {value['free_bytes'] / 2**30:.1f} GiB free"
                f" ({value['source']})"
            )
        elif key.endswith("_per_s"):
            print(f"  {key}: {value:,.0f}")
        else:
            print(f"  {key}: {value:.1f} s" if isinstance(value, float) else f"  {key}: {value}")
    pm = data["per_million_mib"]
    if pm:
        print(
            "  on disk per million rows: raw heap {raw_heap:.1f} MiB, its indexes {raw_indexes:.1f} MiB (raw total"
            " {raw_total:.1f}), hourly rollups {h:.1f} MiB, region rollups {g:.1f} MiB, series rollups {s:.1f} MiB;"
            " all {all:.1f} MiB".format(
                h=pm.get("hourly_total", 0.0), g=pm.get("region_total", 0.0), s=pm.get("series_total", 0.0), **pm
            )
        )
        sizes = data["sizes"]
        print("  totals: " + ", ".join(f"{k} {v['total'] / 2**20:,.0f} MiB" for k, v in sizes.items()))


def print_upkeep(retention: dict | None, ingest: dict | None) -> None:
    if retention:
        print()
        print(
            f"Retention of one day ({retention['day']}, cut {retention['cut']}): {retention['rows_dropped']:,} rows"
            f" dropped in {retention['seconds']:.2f} s; oldest slot now {retention['oldest_after']}"
        )
    if ingest:
        a, w = ingest["alone"], ingest["with_reads"]
        print()
        print(
            f"Ingest in process ({a['count']:,} measurements): alone {a['per_s']:,.0f}/s; while 30-day all-target"
            f" reads loop {w['per_s']:,.0f}/s ({ingest['reads_meanwhile']} reads, median"
            f" {ingest['read_ms_median'] or 0:.0f} ms); ratio {ingest['ratio']:.2f}"
        )


def print_rollup_goal(data: dict, timings: dict) -> int | None:
    """PASS/MISS of the rollup speed goal when this run rolled up every day (None when it did not)."""
    if timings.get("rollup_since") != "61d" or not timings.get("rollup_s"):
        return None
    rate = data["rows"] / timings["rollup_s"]
    ok = rate >= GOAL_ROLLUP_ROWS_PER_S
    print(f"  rollup of every day: {rate:,.0f} rows/s: {'PASS' if ok else 'MISS'} >= {GOAL_ROLLUP_ROWS_PER_S:,.0f}")
    return 0 if ok else 1


def print_live(live: dict | None) -> int:
    if live is None:
        return 0
    ok = live["median_ms"] <= GOAL_LIVE_MS
    print()
    print(
        f"live #live-count: median {live['median_ms']:.1f} ms, max {live['max_ms']:.1f} ms (commit -> frame,"
        f" {len(live['delays_ms'])} samples): {'PASS' if ok else 'MISS'} median <= {GOAL_LIVE_MS:.0f}"
    )
    return 0 if ok else 1


def main() -> int:
    from dashboard_plans import check_plans, print_plans
    from dashboard_reads import measure_reads, print_layers, print_reads
    from dashboard_upkeep import ingest_under_reads, retention_one_day

    from probes.rollups.catalogue import SWITCHABLE

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=BENCH_DB)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--load-workers", type=int, default=2, help="connections loading days at once")
    parser.add_argument("--reload", action="store_true", help="drop the bench database and load it again")
    parser.add_argument("--rollup", action="store_true", help="rebuild every rollup even when complete")
    parser.add_argument("--requests", type=int, default=20, help="warm requests per cell")
    parser.add_argument("--warmups", type=int, default=2)
    parser.add_argument("--cold", type=int, default=1, help="server restarts per cell, one cold request each")
    parser.add_argument(
        "--cells",
        type=lambda text: set(text.split(",")),
        default=set(),
        help="only these reads, e.g. 30d:all,7d:one,csv,region (default every one)",
    )
    parser.add_argument(
        "--without",
        type=lambda text: [name for name in text.split(",") if name],
        default=[],
        help=f"also measure each read with readers doing without this rollup layer, one at a time, back to back with"
        f" every layer: a comma-separated list of {','.join(SWITCHABLE)}",
    )
    parser.add_argument("--csv-requests", type=int, default=5, help="warm requests of regions.csv")
    parser.add_argument("--ingest", type=int, default=20_000, help="measurements per ingest run")
    parser.add_argument("--live-samples", type=int, default=LIVE_SAMPLES)
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-plans", action="store_true")
    parser.add_argument("--skip-retention", action="store_true")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.cold < 1 or args.requests < 1:
        parser.error("--cold and --requests must be at least 1")
    if set(args.without) - set(SWITCHABLE):
        parser.error(f"--without: no such layer among {', '.join(SWITCHABLE)}")

    try:
        env = bench_env(args.db)
        os.environ.update(env)
        import django

        django.setup()
        timings: dict = {}
        load_before = os.getloadavg()
        if args.reload:
            log(f"dashboard bench: dropping {args.db}")
            drop_database(args.db)
        elif load_interrupted(args.db):
            log(f"dashboard bench: {args.db} holds an interrupted load (its indexes may be missing): dropping it")
            drop_database(args.db)
        elif layout_changed(args.db):
            log(f"dashboard bench: {args.db} holds another layout of targets (an older bench): dropping it")
            drop_database(args.db)
        t = time.perf_counter()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput")
        timings["migrate_s"] = time.perf_counter() - t
        data = prepare_data(args, env, timings)
        print_data(data, timings)

        out: dict = {"rows": data["rows"], "timings": timings, "per_million_mib": data["per_million_mib"]}
        missed = 0
        # Goal groups that ran, so a run that skipped every one does not report them met.
        checked = 0
        rollup_missed = print_rollup_goal(data, timings)
        if rollup_missed is not None:
            checked += 1
            missed += rollup_missed
        if not args.skip_http:
            log("dashboard bench: reads over HTTP")
            reads = measure_reads(env, data, args)
            missed += print_reads(reads, data["rows"])
            print_layers(reads)
            checked += 1
            out["reads"] = reads
        if not args.skip_plans:
            log("dashboard bench: plans")
            plans = check_plans(data)
            missed += print_plans(plans)
            checked += 1
            out["plans"] = [{k: v for k, v in p.items() if k != "explain"} for p in plans]
        retention = ingest = live = None
        if not args.skip_retention:
            log("dashboard bench: retention of one day")
            retention = retention_one_day()
            out["retention"] = retention
        if not args.skip_ingest:
            log(f"dashboard bench: ingest of {args.ingest:,} measurements, alone and with 30-day reads")
            ingest = ingest_under_reads(env, data, args.ingest)
            out["ingest"] = ingest
        print_upkeep(retention, ingest)
        if not args.skip_live:
            from devtools.harness import UvicornServer

            log("dashboard bench: live updates in Chromium")
            log_path = Path(os.environ.get("TMPDIR", "/tmp")) / "dashbench-uvicorn-live.log"
            with UvicornServer(env, log_path, access_log=False) as server:
                live = measure_live(server.origin, data, args.live_samples)
            missed += print_live(live)
            checked += 1
            out["live"] = live
        load_after = os.getloadavg()
        print()
        print(
            f"machine: {os.cpu_count()} CPUs, load average before {load_before[0]:.2f} {load_before[1]:.2f}"
            f" {load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}"
        )
        if not checked:
            print("result: no goal checked (reads, plans and live skipped, and no full rollup ran)")
        else:
            print("result:", "all goals met" if not missed else f"{missed} goal(s) missed")
        out["load_before"], out["load_after"] = load_before, load_after
        if args.json:
            print(json.dumps(out, default=str))
        return 0
    except BenchError as exc:
        log(f"dashboard bench: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
