"""bench/dashboard.py's plans: each endpoint's SQL captured in process (django.test.Client and
connection.execute_wrapper, the merge cache emptied first so the rollup and raw reads run), each statement timed,
EXPLAIN (ANALYZE, BUFFERS) of the slowest, and a check that no statement's plan reads a partition of
probes_measurement outside the window's slot range (probes.slot_time.slot_bounds).
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta

from dashboard_common import USERNAME, log
from dashboard_reads import CSV_PARAMS, CSV_PATH, ENDPOINTS

WINDOW_SPAN = {"1h": timedelta(hours=1), "24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
BOUND = re.compile(r"FROM \('([^']+)'\) TO \('([^']+)'\)")
EXPLAINABLE = re.compile(r"^\s*(SELECT|WITH)\b", re.IGNORECASE)


def partition_ranges() -> dict[str, tuple[datetime, datetime]] | None:
    """Each leaf partition of probes_measurement and its [from, to) of scheduled_for; None when not partitioned."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'probes_measurement'::regclass)"
        )
        if not cur.fetchone()[0]:
            return None
        cur.execute("SET TIME ZONE 'UTC'")
        cur.execute(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_partition_tree('probes_measurement') t"
            " JOIN pg_class c ON c.oid = t.relid WHERE t.isleaf"
        )
        out = {}
        for name, bound in cur.fetchall():
            match = BOUND.search(bound or "")
            if match:  # a DEFAULT partition has no range: any plan reading it is reported below
                lo, hi = (datetime.fromisoformat(v).replace(tzinfo=UTC) for v in match.groups())
                out[name] = (lo, hi)
            else:
                out[name] = (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC))
        return out


def relations(plan: dict) -> set[str]:
    found = set()
    if "Relation Name" in plan:
        found.add(plan["Relation Name"])
    for child in plan.get("Plans", []):
        found |= relations(child)
    return found


def capture(client, path: str, params: dict) -> tuple[list[dict], float, int]:
    from django.db import connection

    from probes.readings.cache import merge_cache

    statements: list[dict] = []

    def wrapper(execute, sql, params_, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params_, many, context)
        finally:
            statements.append({"sql": sql, "params": params_, "ms": (time.perf_counter() - t) * 1000, "many": many})

    merge_cache.clear()
    t = time.perf_counter()
    with connection.execute_wrapper(wrapper):
        response = client.get(path, params)
        if response.streaming:  # regions.csv: an async generator, consumed here as the test client allows
            for _block in response:
                pass
    return statements, (time.perf_counter() - t) * 1000, response.status_code


def outside_window(plan_rels: set[str], ranges: dict, since: datetime, until: datetime) -> list[str]:
    from probes.slot_time import slot_bounds

    low, high = slot_bounds(since, until)
    return sorted(name for name in plan_rels if name in ranges and (ranges[name][1] <= low or ranges[name][0] >= high))


def check_plans(data: dict, analyze_slowest: bool = True) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from probes.readings.plan import reporting_reads

    client = Client(HTTP_HOST="localhost")
    client.force_login(get_user_model().objects.get(username=USERNAME))
    ranges = partition_ranges()
    cases = []
    for endpoint in ENDPOINTS:
        cases.append((f"/api/{endpoint}", "30d", "all"))
        cases.append((f"/api/{endpoint}", "1h", "one"))
    cases.append((CSV_PATH, "30d", "all"))
    out = []
    for path, window, which in cases:
        if path == CSV_PATH:
            params = dict(CSV_PARAMS)
        else:
            target = "all" if which == "all" else str(data["target"].id)
            params = {"target": target, "window": window, "percentile": "p50", "metric": "ttft"}
        asked = datetime.now(UTC)
        statements, total_ms, status = capture(client, path, params)
        answered = datetime.now(UTC)
        since, until = asked - WINDOW_SPAN[window], answered
        reads = [s for s in statements if not s["many"] and EXPLAINABLE.match(s["sql"])]
        violations: dict[str, list[str]] = {}
        scanned: set[str] = set()
        with connection.cursor() as cur:
            for s in reads:
                cur.execute("EXPLAIN (FORMAT JSON) " + s["sql"], s["params"])
                plan = cur.fetchone()[0]
                plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
                rels = relations(plan)
                if ranges is not None:
                    parts = {r for r in rels if r in ranges}
                    scanned |= parts
                    bad = outside_window(parts, ranges, since, until)
                    if bad:
                        violations[s["sql"][:120]] = bad
            slowest = max(reads, key=lambda s: s["ms"], default=None)
            explained = None
            if slowest is not None and analyze_slowest:
                # Under the settings the reads ran with (probes.readings.plan.reporting_reads: JIT off, 32 MB of
                # work_mem), so the plan shown is the one they ran.
                with reporting_reads():
                    cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + slowest["sql"], slowest["params"])
                    explained = "\n".join(row[0] for row in cur.fetchall())
        row = {
            "endpoint": path,
            "window": window,
            "target": which,
            "status": status,
            "request_ms": total_ms,
            "statements": len(statements),
            "sql_ms": sum(s["ms"] for s in statements),
            "slowest_ms": slowest["ms"] if slowest else None,
            "slowest_sql": slowest["sql"] if slowest else None,
            "explain": explained,
            "partitions": "not partitioned" if ranges is None else sorted(scanned),
            "outside_window": violations,
        }
        out.append(row)
        log(
            f"  plans {path:<18} {window:>4} {which:<3} {len(statements):3d} statements, {row['sql_ms']:7.1f} ms SQL,"
            f" slowest {row['slowest_ms'] or 0:6.1f} ms"
        )
    return out


def print_plans(plans: list[dict]) -> int:
    """Returns the number of endpoints whose plans read a partition outside their window."""
    print()
    print("Plans (in process, merge cache emptied before each request; statement times as the view ran them)")
    bad = 0
    for p in plans:
        if p["partitions"] == "not partitioned":
            scope = "not partitioned"
        elif p["outside_window"]:
            bad += 1
            scope = "MISS: partitions outside the window: " + "; ".join(
                ", ".join(v) for v in p["outside_window"].values()
            )
        else:
            scope = f"PASS: {len(p['partitions'])} partitions, none outside the window"
        print(
            f"{p['endpoint']:<20} {p['window']:>4} {p['target']:>4}: HTTP {p['status']}, {p['statements']} statements,"
            f" SQL {p['sql_ms']:.1f} ms of {p['request_ms']:.1f} ms; {scope}"
        )
        if p["explain"]:
            print(f"  slowest statement ({p['slowest_ms']:.1f} ms):")
            print("    " + p["slowest_sql"].replace("\n", "\n    "))
            print("  EXPLAIN (ANALYZE, BUFFERS):")
            print("    " + p["explain"].replace("\n", "\n    "))
    return bad
