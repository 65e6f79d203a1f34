"""bench/dashboard.py's reads over HTTP: every dashboard endpoint x window x (one target, all targets), cold (the
first request after uvicorn starts) and warm, plus regions.csv over 30 days of hourly buckets and the region page.

Cold: uvicorn is restarted before each cell, a session is opened through the login form (which loads Django and
opens the database connection, but reads no measurement), then the cell's request is the first data request the
process answers: nothing in the in-process merge cache (probes.readings.cache). The OS page cache and PostgreSQL's
shared buffers are not dropped (that needs root): cold here means a cold application, not a cold disk.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from dashboard_common import GOAL_P95_MS, PASSWORD, USERNAME, log, percentile

from devtools.harness import BenchError, UvicornServer, manage

ENDPOINTS = ["overview", "histograms", "timeseries", "phases", "table"]
WINDOWS = ["1h", "24h", "7d", "30d"]
GOAL_CSV_MS = 2000.0
CSV_PATH = "/export/regions.csv"
CSV_PARAMS = {"since": "30d", "bucket": "1h"}
HOPELESS_MS = 20_000.0  # a first request this slow (regions.csv today) is not repeated warm


def http_session(origin: str):
    import httpx

    client = httpx.Client(base_url=origin, timeout=120.0)
    page = client.get("/accounts/login/")
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    if page.status_code != 200 or not match:
        raise BenchError(f"no login form at {origin}/accounts/login/ (HTTP {page.status_code})")
    answer = client.post(
        "/accounts/login/",
        data={"username": USERNAME, "password": PASSWORD, "csrfmiddlewaretoken": match.group(1), "next": "/"},
        headers={"Referer": f"{origin}/accounts/login/"},
    )
    if answer.status_code != 302 or "sessionid" not in client.cookies:
        raise BenchError(f"signing in failed (HTTP {answer.status_code})")
    return client


def timed_get(client, path: str, params: dict | None) -> tuple[float, int, int]:
    """(ms from request sent to body read, status, bytes)."""
    t = time.perf_counter()
    response = client.get(path, params=params)
    body = response.content
    return (time.perf_counter() - t) * 1000, response.status_code, len(body)


class Servers:
    """uvicorn restarted on demand, with the static files collected once for all of them."""

    def __init__(self, env: dict[str, str]) -> None:
        self.static = tempfile.TemporaryDirectory(prefix="dashbench-static-")
        self.env = {**env, "STATIC_ROOT": self.static.name}
        manage(self.env, "collectstatic", "--noinput", "--verbosity", "0", timeout=300)
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / "dashbench-uvicorn.log"
        self.log_path.unlink(missing_ok=True)
        self.restarts = 0

    def fresh(self, without: tuple[str, ...] = ()) -> UvicornServer:
        """A new uvicorn; `without`: rollup kinds its readers do without (bench/rollups_off_settings.py)."""
        self.restarts += 1
        env = self.env
        if without:
            env = {
                **env,
                "DJANGO_SETTINGS_MODULE": "bench.rollups_off_settings",
                "DASHBENCH_ROLLUPS_OFF": ",".join(without),
            }
        return UvicornServer(env, self.log_path, access_log=False, collect_static=False)

    def close(self) -> None:
        self.static.cleanup()


def measure_cell(
    servers: Servers, path: str, params: dict | None, requests: int, warmups: int, without: tuple[str, ...] = ()
) -> dict:
    """One restart: its first request (cold), then warmups, then `requests` timed ones (warm)."""
    with servers.fresh(without) as server:
        client = http_session(server.origin)
        try:
            cold_ms, status, size = timed_get(client, path, params)
            warm = []
            # Far off any goal, warm repeats would only lengthen the run: the cold sample says MISS.
            if status == 200 and cold_ms <= HOPELESS_MS:
                for i in range(warmups + requests):
                    ms, status, size = timed_get(client, path, params)
                    if status != 200:
                        break
                    if i >= warmups:
                        warm.append(ms)
        finally:
            client.close()
    return {"cold_ms": cold_ms, "warm": warm, "status": status, "bytes": size, "load1": os.getloadavg()[0]}


def summarize(row: dict, colds: list[float], warm: list[float], goal_ms: float) -> dict:
    if colds:
        row.update(
            cold_p50_ms=statistics.median(colds),
            cold_p95_ms=percentile(colds, 0.95),
            cold_n=len(colds),
            # Every first request, in order: with a few restarts the p95 is their largest, and which start it was
            # says whether it is the first one (a cold disk, a busy machine) or any.
            cold_samples_ms=[round(ms, 1) for ms in colds],
        )
    if warm:
        row.update(warm_p50_ms=statistics.median(warm), warm_p95_ms=percentile(warm, 0.95), warm_n=len(warm))
    row["goal_ms"] = goal_ms
    row["cold_pass"] = bool(colds) and row["cold_p95_ms"] < goal_ms
    row["warm_pass"] = bool(warm) and row["warm_p95_ms"] < goal_ms
    return row


def cell(servers, label: dict, path: str, params, args, goal_ms: float, requests: int) -> dict:
    colds, warm, last = [], [], {}
    without = tuple(label.get("without", ()))
    for _ in range(args.cold):
        last = measure_cell(servers, path, params, requests, args.warmups, without)
        if last["status"] != 200:
            break
        colds.append(last["cold_ms"])
        warm.extend(last["warm"])
        requests = 0  # warm samples from the first restart only; later ones add cold samples
    row = summarize(
        {**label, "status": last["status"], "bytes": last["bytes"], "load1": last["load1"]}, colds, warm, goal_ms
    )
    log(
        f"  {label['endpoint']:<18} {label['window']:>4} {label['target']:<3} "
        + (f"without {','.join(without):<12} " if without else "")
        + (
            f"cold p50 {row.get('cold_p50_ms', 0):7.1f} p95 {row.get('cold_p95_ms', 0):7.1f}  "
            f"warm p50 {row.get('warm_p50_ms', 0):7.1f} p95 {row.get('warm_p95_ms', 0):7.1f} ms"
            f"  (cold {' / '.join(f'{ms:.0f}' for ms in colds)})"
            if colds
            else f"HTTP {last['status']}"
        )
    )
    return row


def variants(args) -> list[tuple[str, ...]]:
    """() (every rollup kind), then each --without layer alone, in the order given."""
    return [(), *((name,) for name in args.without)]


def measure_reads(env: dict[str, str], data: dict, args) -> dict:
    servers = Servers(env)
    loads = [os.getloadavg()]
    results = []
    try:
        target_id = data["target"].id
        for endpoint in ENDPOINTS:
            for window in WINDOWS:
                for target in (str(target_id), "all"):
                    params = {"target": target, "window": window, "percentile": "p50", "metric": "ttft"}
                    chosen = f"{window}:{'all' if target == 'all' else 'one'}"
                    if args.cells and chosen not in args.cells:
                        continue
                    label = {
                        "endpoint": f"/api/{endpoint}",
                        "window": window,
                        "target": "all" if target == "all" else "one",
                    }
                    # With every rollup kind, then without each --without layer, back to back, so a comparison
                    # sees the same machine load.
                    for without in variants(args):
                        results.append(
                            cell(
                                servers,
                                {**label, "without": without},
                                f"/api/{endpoint}",
                                params,
                                args,
                                GOAL_P95_MS,
                                args.requests,
                            )
                        )
                        loads.append(os.getloadavg())
        if not args.cells or "csv" in args.cells:
            for without in variants(args):
                label = {"endpoint": CSV_PATH, "window": "30d", "target": "all", "without": without}
                results.append(cell(servers, label, CSV_PATH, CSV_PARAMS, args, GOAL_CSV_MS, args.csv_requests))
        if not args.cells or "region" in args.cells:
            region = data["regions"][0]
            for without in variants(args):
                label = {"endpoint": f"/regions/{region.slug}/", "window": "page", "target": "all", "without": without}
                results.append(cell(servers, label, f"/regions/{region.slug}/", None, args, GOAL_P95_MS, args.requests))
        loads.append(os.getloadavg())
    finally:
        servers.close()
    return {
        "cells": results,
        "restarts": servers.restarts,
        "load1_min": min(x[0] for x in loads),
        "load1_max": max(x[0] for x in loads),
        "load_at_end": loads[-1],
    }


def print_reads(reads: dict, rows: int) -> int:
    """The table of one row count; returns the number of cells missing a goal."""
    print()
    print(
        f"Reads at {rows:,} rows (cold: first request after a uvicorn start, {reads['restarts']} starts; warm: later"
        f" requests); load average 1 min {reads['load1_min']:.2f} to {reads['load1_max']:.2f}"
    )
    head = (
        f"{'endpoint':<20} {'window':>6} {'target':>6} {'cold p50':>9} {'cold p95':>9} {'warm p50':>9} {'warm p95':>9}"
    )
    print(head + f" {'bytes':>9}  goal")
    missed = 0
    for r in reads["cells"]:
        if r.get("without"):
            continue  # in print_layers' table; goals are the site's as it is
        if "cold_p95_ms" not in r:
            print(f"{r['endpoint']:<20} {r['window']:>6} {r['target']:>6}  MISS (HTTP {r['status']})")
            missed += 1
            continue
        nums = " ".join(
            f"{r[k]:9.1f}" if k in r else f"{'-':>9}"
            for k in ("cold_p50_ms", "cold_p95_ms", "warm_p50_ms", "warm_p95_ms")
        )
        ok = r["cold_pass"] and r["warm_pass"]
        missed += not ok
        verdict = (
            f"cold {'PASS' if r['cold_pass'] else 'MISS'}, warm {'PASS' if r['warm_pass'] else 'MISS'}"
            f" (p95 < {r['goal_ms']:.0f})"
        )
        print(f"{r['endpoint']:<20} {r['window']:>6} {r['target']:>6} {nums} {r['bytes']:>9}  {verdict}")
    return missed


def print_layers(reads: dict) -> None:
    """The worth of each --without layer: per cell, p95 cold and warm with every rollup kind and without the layer
    (measured back to back), and their ratio (without / with; above 1 the layer saves time)."""
    base = {(r["endpoint"], r["window"], r["target"]): r for r in reads["cells"] if not r.get("without")}
    rows = [r for r in reads["cells"] if r.get("without")]
    if not rows:
        return
    print()
    print("Rollup layers switched off (p95 ms with every kind, without the layer, ratio without/with)")
    print(
        f"{'layer':<13} {'endpoint':<20} {'window':>6} {'target':>6} {'cold with':>10} {'without':>8} {'ratio':>6}"
        f" {'warm with':>10} {'without':>8} {'ratio':>6}"
    )
    for r in rows:
        b = base.get((r["endpoint"], r["window"], r["target"]), {})
        nums = []
        for k in ("cold_p95_ms", "warm_p95_ms"):
            with_ms, without_ms = b.get(k), r.get(k)
            ratio = f"{without_ms / with_ms:6.2f}" if with_ms and without_ms else f"{'-':>6}"
            nums.append(
                (f"{with_ms:10.1f}" if with_ms else f"{'-':>10}")
                + (f" {without_ms:8.1f}" if without_ms else f" {'-':>8}")
                + f" {ratio}"
            )
        print(f"{','.join(r['without']):<13} {r['endpoint']:<20} {r['window']:>6} {r['target']:>6} {nums[0]} {nums[1]}")
