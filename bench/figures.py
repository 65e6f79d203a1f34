#!/usr/bin/env python
"""How long does drawing each dashboard endpoint's figure take, apart from reading its rows?

No database: every figure latency.api draws (the map with a located target, dark and stale regions and real
users; the distribution; the time series as heatmap at 1 h, 24 h and 30 d and as lines; the phases) from made-up
rows of --regions regions (15, the seeded fleet), in this process. Each is built and turned into its JSON
(latency.charts.figure_json) --runs times after a warm-up; median and p95 in ms, and the same with the template
set through plotly's normal API (update_layout(template="plotly_white"), as before issue 17's lane "plotly"), so
the saving shows on the same machine at the same load. The two JSONs are compared too. Copied into an older
checkout (without latency.charts.with_template) it times that checkout's figures, in both columns.

    .venv/bin/python bench/figures.py [--regions 15] [--runs 30] [--json]

Exit status: 0 when it ran, 1 when the fast figures' JSON differs from the reference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")

import django  # noqa: E402

django.setup()

from latency import charts  # noqa: E402
from latency.charts.distribution import histogram_figure  # noqa: E402
from latency.charts.over_time import timeseries_figure  # noqa: E402
from latency.charts.real_users import real_users_trace  # noqa: E402
from probes import metrics  # noqa: E402
from probes.histogram import Histogram  # noqa: E402
from probes.readings.fleet import RegionHealth  # noqa: E402
from probes.readings.plan import BUCKETS  # noqa: E402
from probes.readings.realusers import RealUserRow, figure_keys  # noqa: E402

NOW = datetime(2026, 12, 1, 20, tzinfo=UTC)
METRIC = metrics.METRICS[0].name
WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(hours=24), "30d": timedelta(days=30)}


def builders(count: int) -> dict:
    rnd = random.Random(17)
    regions = [
        {"id": i, "slug": f"r{i}", "name": f"Region {i}", "city": f"City {i}", "country": "ZZ",
         "lat": rnd.uniform(-50, 60), "lon": rnd.uniform(-170, 170), "samples": 1000 + i, "errors": i,
         "error_rate": i / 1000, "value": 300.0 + 10 * i, "p50": 300.0 + 10 * i, "p95": 700.0 + i,
         "connect_p50": 30.0, "floor_ms": 40.0, "tax_ms": 5.0}
        for i in range(count)
    ]  # fmt: skip
    health = {0: RegionHealth(0, "stale", NOW), 1: RegionHealth(1, "dark", None)}
    target = {"id": 1, "name": "target", "location_name": "Ashburn", "lat": 39.0, "lon": -77.5}
    real = [
        RealUserRow(
            bucket=None, country="ZZ", city=f"City {i}", latitude=rnd.uniform(-50, 60),
            longitude=rnd.uniform(-170, 170), target_id=None, target="", host="example.org", model="m",
            samples=50 + i, errors=i, figures=dict.fromkeys(figure_keys(), 300.0 + i),
        )
        for i in range(10)
    ]  # fmt: skip
    hists = {}
    for r in regions:
        hists[r["slug"]] = Histogram()
        for _ in range(500):
            hists[r["slug"]].add(rnd.lognormvariate(6, 0.5))
    names = {r["slug"]: r["name"] for r in regions}

    def series(window: str) -> list[dict]:
        step, span = BUCKETS[window], WINDOWS[window]
        return [
            {"bucket_start": NOW - span + k * step, "region": r["slug"], "region_name": r["name"],
             "p50": 300.0 + k, "p95": 600.0 + k, "value": 300.0 + k, "samples": 10}
            for r in regions for k in range(math.ceil(span / step))
        ]  # fmt: skip

    def world():
        fig = charts.world_map(regions, target, METRIC, "p95", health)
        fig.add_trace(real_users_trace(real, scale=False))
        return fig

    phases = [
        {"region": r["slug"], "region_name": r["name"], "samples": 10, "medians": {},
         "segments": {s: 10.0 + i for i, s in enumerate(charts.SEGMENT_COLORS)}}
        for r in regions
    ]  # fmt: skip
    out = {
        "overview (map)": world,
        "histograms": lambda: histogram_figure(hists, METRIC, 0.95, names=names),
        "phases": lambda: charts.phases_figure(phases),
        "timeseries lines 24h": lambda: timeseries_figure(
            [s for s in series("24h") if s["region"] in ("r0", "r1", "r2")], METRIC, "p50", lines=True,
            step=BUCKETS["24h"]),
    }  # fmt: skip
    for window in WINDOWS:
        rows = series(window)
        out[f"timeseries heatmap {window}"] = lambda rows=rows, window=window: timeseries_figure(
            rows, METRIC, "p50", step=BUCKETS[window], window=(NOW - WINDOWS[window], NOW)
        )
    return out


def plotlys_own_template_setting(fig):
    fig.update_layout(template=charts.TEMPLATE)
    return fig


def timed(build, runs: int) -> dict:
    charts.figure_json(build())
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        charts.figure_json(build())
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"p50": statistics.median(times), "p95": times[max(1, math.ceil(0.95 * runs)) - 1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--regions", type=int, default=15)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    figures = builders(args.regions)
    fast = {name: timed(build, args.runs) for name, build in figures.items()}
    fast_json = {name: charts.figure_json(build()) for name, build in figures.items()}
    fast_with_template = getattr(charts, "with_template", None)
    if fast_with_template is None:  # a checkout from before the lane: its figures name the template themselves
        normal, normal_json = fast, fast_json
    else:
        charts.with_template = plotlys_own_template_setting
        try:
            normal = {name: timed(build, args.runs) for name, build in figures.items()}
            normal_json = {name: charts.figure_json(build()) for name, build in figures.items()}
        finally:
            charts.with_template = fast_with_template
    same = {name: fast_json[name] == normal_json[name] for name in figures}
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    if args.json:
        print(json.dumps({"fast": fast, "normal": normal, "same_json": same, "load": [load_before, load_after]}))
    else:
        print(f"figure build + figure_json at {args.regions} regions, {args.runs} runs (ms)")
        print(f"{'figure':26} {'fast p50':>9} {'p95':>7} {'plotly p50':>11} {'p95':>7}  same JSON")
        for name in figures:
            f, n = fast[name], normal[name]
            print(f"{name:26} {f['p50']:9.1f} {f['p95']:7.1f} {n['p50']:11.1f} {n['p95']:7.1f}  {same[name]}")
        print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
