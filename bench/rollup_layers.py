#!/usr/bin/env python
"""What each rollup layer saves a read, in process: the dashboard's readers (the map's summary, the distribution,
the time series, the phases, the table) over 24 h, 7 d and 30 d, for one target and every target, each timed with
every rollup kind and without each layer of probes.rollups.catalogue.SWITCHABLE (LATENCY_ROLLUPS_OFF), the merge
cache emptied before every call (a cold read of rollups, as a fresh process makes).

The complement of bench/dashboard.py --without, which measures the same over HTTP with a server start per sample:
here the variants of a cell are timed in turn within each round (the order rotating round to round), many rounds,
so a comparison holds up on a machine other work keeps busy. What it leaves out (HTTP, JSON, the figure, the
process start) is the same with or without a layer.

Runs on bench/dashboard.py's data (database latency_dashbench; run that first).

    .venv/bin/python bench/rollup_layers.py [--rounds 7] [--windows 24h,7d,30d] [--without region,series_days,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from dashboard_common import BENCH_DB, bench_env, percentile  # noqa: E402

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}


def readers() -> dict:
    from latency.aggregates import region_summary
    from probes import readings

    return {
        "overview": lambda f: region_summary(f, datetime.now(UTC)),
        "histograms": readings.distribution_rows,
        "timeseries": readings.series,
        "phases": readings.phases,
        "table": readings.table,
    }


def main() -> int:
    from probes.rollups.catalogue import SWITCHABLE

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--windows", type=lambda t: t.split(","), default=list(WINDOWS))
    parser.add_argument("--without", type=lambda t: [n for n in t.split(",") if n], default=list(SWITCHABLE))
    args = parser.parse_args()
    os.environ.update(bench_env(BENCH_DB))
    import django

    django.setup()
    from django.test.utils import override_settings

    from probes.models import Target
    from probes.readings.cache import merge_cache
    from probes.readings.selection import Selection

    one = Target.objects.order_by("id").values_list("id", flat=True).first()
    variants: list[tuple[str, ...]] = [(), *((name,) for name in args.without)]
    print(f"load average before {os.getloadavg()[0]:.2f}; {args.rounds} rounds; ms, merge cache emptied each call")
    print(
        f"{'reader':<11} {'window':>6} {'target':>6} " + " ".join(f"{'+'.join(v) or 'all kinds':>22}" for v in variants)
    )
    for name, read in readers().items():
        for window in args.windows:
            for target in ("one", "all"):
                times: dict[tuple[str, ...], list[float]] = {v: [] for v in variants}
                for r in range(args.rounds + 1):
                    for v in variants[r % len(variants) :] + variants[: r % len(variants)]:
                        now = datetime.now(UTC)
                        f = Selection(
                            target_ids=[one] if target == "one" else [],
                            since=now - WINDOWS[window],
                            until=now,
                            window=window,
                        )
                        merge_cache.clear()
                        with override_settings(LATENCY_ROLLUPS_OFF=v):
                            t = time.perf_counter()
                            read(f)
                            ms = (time.perf_counter() - t) * 1000
                        if r:  # the first round warms the connection and the OS caches
                            times[v].append(ms)
                base = statistics.median(times[()])
                cells = []
                for v in variants:
                    med, p95 = statistics.median(times[v]), percentile(times[v], 0.95)
                    cells.append(f"{med:7.1f} {p95:7.1f} x{med / base:4.2f}")
                print(f"{name:<11} {window:>6} {target:>6} " + " ".join(f"{c:>22}" for c in cells), flush=True)
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
