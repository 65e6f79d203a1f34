#!/usr/bin/env python
"""How long does one alert evaluation pass take over 1,000 rules x 15 regions on 10 million measurements?

Data: the dashboard bench's database, latency_dashbench (bench/dashboard.py: 10,000,000 measurements over 60 days,
15 regions x 60 bench targets, 6 before issue 17; rollups built); its prepare_data loads it on the
first run (minutes) and afterwards only appends the slots that came due since, so the windows end at the clock.

Rules: 1,000 AlertRules named alertbench-NNNN (the previous run's are deleted first), drawn with a fixed seed: every
metric (ttft, ttfat, ttfb, connect, total, error_rate, missed), p50/p90/p95/p99, a threshold (1.5, 2 or 3 times the
target's own percentile over the last 24 h), a baseline factor (1.5, 2, 3) or both, windows of 5 to 60 min,
min_samples 3..10 (never more than a probe every 45 s can take in the window), quorums of 1..5 regions and some as a
share, a fifth with a subset of regions, a sixth with no target (every target). Written with bulk_create; a sample
of them is checked with probes.alerts.rules.refusals, which must refuse none. No channels: nothing is sent.

Measured, in this process with the bench's settings (probes.alerts.evaluate.run_pass, time.perf_counter):
- the cold pass: the first of the process, merge_cache empty, so the 7-day baselines are merged from rollups;
- --passes warm passes at the same moment: median, p95, max;
- the firing path: slower rows are added for the last 135 min (copies of the real calls, outside the slot grid,
  worker "alertbench-slow"): one target slower at the provider from every region (server wait +1.5 s), one slower on
  the network from 6 regions (connect and TLS +250 ms, a fifth of the copies failing). A pass at now - 61 min moves
  the rules that hold to pending; the baselines of the hour of now are merged (as the passes of the minutes before
  would have left them); the timed pass at now fires (incidents, timeline, attribution, summaries), and the next
  pass finds them firing. The rows (and the BRIN ranges they widened), states and incidents are removed
  afterwards, and the rules at the end of the run (--keep-rules keeps them).
Reference, in the same process: a plain count(*) of the pass's read window (its longest window + 10 min) and the
fetch of that window's rows with the columns the pass reads; the pass's ratio to each is printed.
Goal: every pass under 5 s (the beat runs one a minute). --profile adds cProfile listings of a cold, a warm and a
firing pass (run after the timed ones, the firing scenario once more). --storm makes every target slower from every
region instead (provider and network at once): most rules fire in the one pass, the worst case of the fire path.

    .venv/bin/python bench/alerts.py [--rules 1000] [--passes 10] [--storm] [--profile] [--json]

Exit status: 0 when the benchmark ran (see PASS/MISS), 1 when it could not run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

# The dashboard bench's data, database and environment (bench/dashboard.py), shared rather than copied.
import dashboard  # noqa: E402

from devtools.harness import BenchError, machine_context, manage  # noqa: E402

GOAL_S = 5.0
PREFIX = "alertbench-"
SLOW_WORKER = "alertbench-slow"
SLOW_MINUTES = 135  # covers the setup pass's longest window (+ the cold-start look-back) at now - 61 min
SETUP_BACK = timedelta(minutes=61)  # > the longest window: the pass at now fires whatever held at now - 61 min
PROVIDER_SLOW_TARGET = "bench-d Paris"  # warm connections: only the provider can be slower
NETWORK_SLOW_TARGET = "bench-a Ashburn"  # cold connections: connect and TLS are measured
NETWORK_SLOW_REGIONS = 6
INTERVAL_S = 45  # the dashboard bench's probes

METRIC_WEIGHTS = {
    "ttft": 30,
    "total": 15,
    "ttfb": 12,
    "ttfat": 10,
    "connect": 8,
    "error_rate": 17,
    "missed": 8,
}
LATENCY_COLUMNS = {m: f"{m}_ms" for m in ("ttft", "ttfat", "ttfb", "connect", "total")}
PERCENTILE_Q = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


# --- rules --------------------------------------------------------------------------------------------------


def reference_levels(targets) -> dict[tuple[int, str, str], float]:
    """{(target_id, metric, pNN): the target's percentile over the last 24 h}: what a person setting a threshold
    would look at first."""
    from django.db import connection

    out = {}
    with connection.cursor() as cur:
        for metric, column in LATENCY_COLUMNS.items():
            cur.execute(
                f"""
                SELECT target_id, percentile_disc(ARRAY[0.5, 0.9, 0.95, 0.99]) WITHIN GROUP (ORDER BY {column})
                FROM probes_measurement
                WHERE target_id = ANY(%s) AND started_at >= now() - interval '24 hours' AND outcome = 'ok'
                  AND {column} IS NOT NULL
                GROUP BY target_id
                """,
                [[t.id for t in targets]],
            )
            for target_id, levels in cur.fetchall():
                for name, level in zip(PERCENTILE_Q, levels, strict=True):
                    out[(target_id, metric, name)] = level
    return out


def draw_rules(n: int, targets, regions, levels: dict, seed: int) -> tuple[list, dict[str, list[int]]]:
    """n unsaved AlertRules (a realistic mix) and {rule name: region ids} for those with a subset."""
    from probes.alerts.models import AlertRule

    rng = random.Random(seed)
    cold = [t for t in targets if t.probes.filter(connection="cold").exists()]
    metrics, weights = zip(*METRIC_WEIGHTS.items(), strict=True)
    rules, subsets = [], {}
    for i in range(n):
        target = None if i % 6 == 0 else targets[rng.randrange(len(targets))]
        metric = rng.choices(metrics, weights)[0]
        if metric == "connect" and target is not None and target not in cold:
            target = cold[rng.randrange(len(cold))]  # warm connections measure no connect
        window = rng.choices([5, 10, 15, 30, 60], [20, 30, 20, 20, 10])[0]
        min_samples = min(rng.randint(3, 10), window * 60 // INTERVAL_S)
        subset = rng.sample(regions, rng.randint(3, 10)) if rng.random() < 0.2 else []
        min_regions = min(rng.choices([1, 2, 3, 4, 5], [35, 25, 20, 10, 10])[0], len(subset) or len(regions))
        share = rng.choice([10.0, 25.0, 50.0]) if rng.random() < 0.2 else None
        fields: dict = {"percentile": "", "threshold_ms": None, "threshold_percent": None, "baseline_factor": None}
        if metric in LATENCY_COLUMNS:
            pct = rng.choices(list(PERCENTILE_Q), [15, 25, 40, 20])[0]
            condition = rng.choice(["threshold", "factor", "both"])
            fields["percentile"] = pct
            if condition in ("threshold", "both"):
                on = [target] if target is not None else (cold if metric == "connect" else targets)
                level = max(levels.get((t.id, metric, pct), 0.0) for t in on)
                fields["threshold_ms"] = float(round(max(level, 10.0) * rng.choice([1.5, 2.0, 3.0]), -1))
            if condition in ("factor", "both"):
                fields["baseline_factor"] = rng.choice([1.5, 2.0, 3.0])
        elif metric == "error_rate":
            fields["threshold_percent"] = rng.choice([5.0, 10.0, 20.0, 25.0])
        else:
            fields["threshold_percent"] = rng.choice([5.0, 10.0, 25.0])
        name = f"{PREFIX}{i:04d}"
        rules.append(
            AlertRule(
                name=name,
                target=target,
                metric=metric,
                window_minutes=window,
                min_samples=min_samples,
                min_regions=min_regions,
                min_regions_percent=share,
                enabled=True,
                **fields,
            )
        )
        if subset:
            subsets[name] = [r.id for r in subset]
    return rules, subsets


def create_rules(n: int, data: dict, seed: int, checked: int) -> dict:
    """Delete the bench's rules (their states and incidents go with them) and write n new ones."""
    from probes.alerts.models import AlertRule
    from probes.alerts.rules import refusals

    t = time.perf_counter()
    AlertRule.objects.filter(name__startswith=PREFIX).delete()
    deleted_s = time.perf_counter() - t
    others = AlertRule.objects.filter(enabled=True).exclude(name__startswith=PREFIX).count()
    if others:
        raise BenchError(f"{others} enabled rule(s) of someone else's in the bench database: the pass would judge them")
    targets = [p.target for p in data["probes"]]
    levels = reference_levels(targets)
    rules, subsets = draw_rules(n, targets, data["regions"], levels, seed)
    # A sample through the admin's own check: the mix must hold rules that can both fire and stay quiet.
    step = max(1, n // max(1, checked))
    for rule in rules[::step]:
        problems = refusals(
            metric=rule.metric,
            percentile=rule.percentile,
            threshold_ms=rule.threshold_ms,
            threshold_percent=rule.threshold_percent,
            baseline_factor=rule.baseline_factor,
            window_minutes=rule.window_minutes,
            min_samples=rule.min_samples,
            min_regions=rule.min_regions,
            min_regions_percent=rule.min_regions_percent,
            target_id=rule.target.id if rule.target else None,
            region_ids=subsets.get(rule.name),
        )
        if problems:
            raise BenchError(f"the bench drew a rule the admin refuses: {rule.name}: {problems}")
    t = time.perf_counter()
    AlertRule.objects.bulk_create(rules)
    through = AlertRule.regions.through
    by_name = {r.name: r.id for r in rules}
    through.objects.bulk_create(
        [through(alertrule_id=by_name[name], region_id=rid) for name, ids in subsets.items() for rid in ids]
    )
    created_s = time.perf_counter() - t
    mix: dict[str, int] = {}
    for rule in rules:
        mix[rule.metric] = mix.get(rule.metric, 0) + 1
    return {
        "rules": len(rules),
        "every_target": sum(r.target is None for r in rules),
        "with_subset": len(subsets),
        "with_baseline": sum(r.baseline_factor is not None for r in rules),
        "with_share_quorum": sum(r.min_regions_percent is not None for r in rules),
        "by_metric": mix,
        "checked_with_refusals": len(rules[::step]),
        "delete_previous_s": deleted_s,
        "create_s": created_s,
    }


def reset_states() -> None:
    """Back to a quiet start: no state, no incident of the bench's rules."""
    from probes.alerts.models import AlertState, Incident

    Incident.objects.filter(rule__name__startswith=PREFIX).delete()
    AlertState.objects.filter(rule__name__startswith=PREFIX).delete()


# --- the firing scenario ------------------------------------------------------------------------------------

SLOW_SQL = """
INSERT INTO probes_measurement (
    probe_id, target_id, region_id, scheduled_for, started_at, worker, ingested_at, outcome, error, error_type,
    retry_after_s, http_status, http_version, remote_addr, connection, dns_ms, connect_ms, tls_ms, ttfb_ms,
    first_event_ms, ttft_ms, ttfat_ms, total_ms, output_tokens, tokens_estimated, tokens_per_s, itl_p50_ms,
    itl_p95_ms, itl_max_ms, response_bytes)
SELECT probe_id, target_id, region_id, scheduled_for + make_interval(secs => g), started_at + make_interval(secs => g),
    %(worker)s, ingested_at + make_interval(secs => g),
    CASE WHEN fail THEN 'connect_error' ELSE outcome END,
    CASE WHEN fail THEN 'connection refused' ELSE error END,
    CASE WHEN fail THEN 'ConnectError' ELSE error_type END,
    retry_after_s, CASE WHEN fail THEN NULL ELSE http_status END, http_version, remote_addr, connection, dns_ms,
    CASE WHEN fail THEN NULL ELSE connect_ms + %(net)s END,
    CASE WHEN fail THEN NULL ELSE tls_ms + %(net)s END,
    CASE WHEN fail THEN NULL ELSE ttfb_ms + %(add)s END,
    CASE WHEN fail THEN NULL ELSE first_event_ms + %(add)s END,
    CASE WHEN fail THEN NULL ELSE ttft_ms + %(add)s END,
    CASE WHEN fail THEN NULL ELSE ttfat_ms + %(add)s END,
    CASE WHEN fail THEN coalesce(dns_ms, 0) + 3000 ELSE total_ms + %(add)s END,
    CASE WHEN fail THEN NULL ELSE output_tokens END, CASE WHEN fail THEN NULL ELSE tokens_estimated END,
    CASE WHEN fail THEN NULL ELSE tokens_per_s END, itl_p50_ms, itl_p95_ms, itl_max_ms,
    CASE WHEN fail THEN NULL ELSE response_bytes END
FROM (
    SELECT m.*, g, random() < %(fail)s AS fail
    FROM probes_measurement m CROSS JOIN generate_series(1, 2) AS g
    WHERE m.target_id = %(target)s AND m.region_id = ANY(%(regions)s) AND m.started_at >= %(since)s
      AND m.started_at < %(until)s - interval '3 seconds' AND m.worker <> %(worker)s
) copies
"""


def remove_slow_rows(target_ids: list[int]) -> int:
    """Delete the slower rows, and summarise anew the BRIN ranges they were written into: PostgreSQL puts new
    rows in old pages' free space, which widens those pages' ranges of the started_at BRIN index to "now"
    (a summary never narrows by itself), and the dashboard bench would read most of the table through it."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "DELETE FROM probes_measurement WHERE target_id = ANY(%s) AND started_at >= now() - interval '3 days'"
            " AND worker = %s RETURNING (ctid::text::point)[0]::bigint",
            [target_ids, SLOW_WORKER],
        )
        deleted = cur.fetchall()
        blocks = {row[0] for row in deleted}
        cur.execute(
            "SELECT indexrelid::regclass::text, coalesce((SELECT option_value::int FROM pg_options_to_table("
            "c.reloptions) WHERE option_name = 'pages_per_range'), 128) FROM pg_index i JOIN pg_class c"
            " ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
            " WHERE i.indrelid = 'probes_measurement'::regclass AND a.amname = 'brin'"
        )
        for index, per_range in cur.fetchall():
            for first in sorted({block // per_range * per_range for block in blocks}):
                cur.execute("SELECT brin_desummarize_range(%s::regclass, %s)", [index, first])
            cur.execute("SELECT brin_summarize_new_values(%s::regclass)", [index])
    return len(deleted)


def add_slow_rows(data: dict, now: datetime, storm: bool = False) -> dict:
    """Two slower copies of every call of the last SLOW_MINUTES: two thirds of the calls are slow, so even p50
    moves. Provider: server wait +1.5 s from every region; network: connect and TLS +250 ms (TTFB and after
    +500 ms) from NETWORK_SLOW_REGIONS regions, a fifth of the copies failing to connect. storm: every target
    from every region, both at once (most rules fire in one pass)."""
    from django.db import connection

    by_name = {p.target.name: p.target for p in data["probes"]}
    regions = [r.id for r in data["regions"]]
    since = now - timedelta(minutes=SLOW_MINUTES)
    added = {}
    with connection.cursor() as cur:
        plan = [
            (PROVIDER_SLOW_TARGET, regions, 0.0, 1500.0, 0.0),
            (NETWORK_SLOW_TARGET, regions[:NETWORK_SLOW_REGIONS], 250.0, 500.0, 0.2),
        ]
        if storm:
            plan = [(name, regions, 250.0, 1500.0, 0.2) for name in by_name]
        for name, regions_of, net, add, fail in plan:
            cur.execute(
                SLOW_SQL,
                {
                    "worker": SLOW_WORKER,
                    "net": net,
                    "add": add,
                    "fail": fail,
                    "target": by_name[name].id,
                    "regions": regions_of,
                    "since": since,
                    "until": now,
                },
            )
            added[name] = cur.rowcount
    return added


# --- measuring ----------------------------------------------------------------------------------------------


def timed_pass(now: datetime) -> tuple[float, object]:
    from probes.alerts.evaluate import run_pass

    t = time.perf_counter()
    report = run_pass(now)
    return time.perf_counter() - t, report


def references(now: datetime, longest: int, data: dict, repeats: int = 5) -> dict:
    """The pass's raw read alone, as plain SQL on the same connection: a count of its window (on started_at
    alone), and the fetch of the window's rows with the columns the pass reads, per (target, region)."""
    from django.db import connection

    from probes.alerts.evaluate import COLD_IDLE
    from probes.readings.alerts import CALL_COLUMNS

    since = now - timedelta(minutes=longest) - COLD_IDLE
    target_ids = [p.target.id for p in data["probes"]]
    region_ids = [r.id for r in data["regions"]]
    count_t, fetch_t = [], []
    rows = 0
    with connection.cursor() as cur:
        for _ in range(repeats):
            t = time.perf_counter()
            cur.execute(
                "SELECT count(*) FROM probes_measurement WHERE started_at >= %s AND started_at < %s", [since, now]
            )
            rows = cur.fetchone()[0]
            count_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            cur.execute(
                f"SELECT target_id, region_id, started_at, probe_id, outcome = 'ok', {', '.join(CALL_COLUMNS)}"
                " FROM probes_measurement WHERE target_id = ANY(%s) AND region_id = ANY(%s)"
                " AND started_at >= %s AND started_at < %s ORDER BY started_at",
                [target_ids, region_ids, since, now],
            )
            cur.fetchall()
            fetch_t.append(time.perf_counter() - t)
    return {
        "window_rows": rows,
        "window_minutes": longest + int(COLD_IDLE.total_seconds() // 60),
        "count_s": statistics.median(count_t),
        "fetch_s": statistics.median(fetch_t),
    }


def profiled(now: datetime, cold: bool, top: int = 25) -> str:
    from probes.alerts.evaluate import run_pass
    from probes.readings.cache import merge_cache

    if cold:
        merge_cache.clear()
    profile = cProfile.Profile()
    profile.enable()
    run_pass(now)
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def summary_of(report) -> dict:
    return {
        "rules": report.rules,
        "pairs": report.pairs,
        "opened": report.opened,
        "resolved": report.resolved,
        "moved": report.moved,
        "lost_races": report.lost_races,
    }


def fire(now: datetime, target_ids: list[int], profile: dict | None = None) -> dict:
    """With the slower rows in place: a pass at now - 61 min (the rules that hold go pending), the baselines of
    the hour of `now` merged (as the passes of the minutes before would have left them), then the pass at now,
    which fires: timed, or profiled into profile["profile_firing"]."""
    from django.db.models import Count

    from probes.alerts.models import Incident, IncidentEvent
    from probes.readings.alerts import baselines

    out: dict = {}
    setup_s, setup = timed_pass(now - SETUP_BACK)
    out["pending"] = {"seconds": setup_s, "at": (now - SETUP_BACK).isoformat(), **summary_of(setup)}
    log(f"  pass at now - 61 min: {setup_s:.2f} s: {setup}")
    baselines(target_ids, now)
    if profile is not None:
        profile["profile_firing"] = profiled(now, cold=False)
        return out
    fire_s, fired = timed_pass(now)
    log(f"  pass at now: {fire_s:.2f} s: {fired}")
    incidents = Incident.objects.filter(rule__name__startswith=PREFIX)
    phases = dict(incidents.values_list("phase").annotate(n=Count("id")).order_by("phase"))
    example = incidents.filter(phase="server_wait").order_by("id").first()
    out["firing"] = {
        "seconds": fire_s,
        **summary_of(fired),
        "incidents": incidents.count(),
        "global": incidents.filter(scope="global").count(),
        "events": IncidentEvent.objects.filter(incident__rule__name__startswith=PREFIX).count(),
        "phases": {phase or "-": n for phase, n in phases.items()},
        "example": example.summary if example else "",
    }
    again_s, again = timed_pass(now)
    out["firing_again"] = {"seconds": again_s, **summary_of(again)}
    log(f"  again at now (firing, nothing new): {again_s:.2f} s: {again}")
    return out


def measure(args, data: dict) -> dict:
    from probes.alerts.models import AlertRule
    from probes.readings.cache import merge_cache

    out: dict = {}
    now = datetime.now(UTC).replace(microsecond=0)
    out["now"] = now.isoformat()
    reset_states()
    merge_cache.clear()
    log("alerts bench: cold pass (empty merge cache: baselines merged from rollups)")
    cold_s, cold = timed_pass(now)
    out["cold"] = {"seconds": cold_s, **summary_of(cold)}
    log(f"  {cold_s:.2f} s: {cold}")
    log(f"alerts bench: {args.passes} warm passes at {now:%H:%M:%S}")
    warm = []
    for _ in range(args.passes):
        seconds, last = timed_pass(now)
        warm.append(seconds)
        log(f"  {seconds:.2f} s: {last}")
    out["warm"] = {
        "passes": warm,
        "median_s": statistics.median(warm),
        "p95_s": dashboard.percentile(warm, 0.95),
        "max_s": max(warm),
        **summary_of(last),
    }
    longest = max(AlertRule.objects.filter(enabled=True).values_list("window_minutes", flat=True))
    out["reference"] = references(now, longest, data)

    log("alerts bench: the firing path")
    slow_targets = [p.target.id for p in data["probes"]]
    remove_slow_rows(slow_targets)
    reset_states()
    try:
        t = time.perf_counter()
        out["slow_rows"] = add_slow_rows(data, now, storm=args.storm)
        out["slow_rows_s"] = time.perf_counter() - t
        log(f"  slower rows added: {out['slow_rows']}")
        out.update(fire(now, slow_targets))
        if args.profile:
            log("alerts bench: profiling a firing pass (cProfile), the scenario again")
            reset_states()
            fire(now, slow_targets, profile=out)
    finally:
        out["slow_rows_removed"] = remove_slow_rows(slow_targets)
        reset_states()
    if args.profile:
        log("alerts bench: profiling a warm and a cold pass (cProfile)")
        timed_pass(now)  # the states settle (the firing scenario's were removed): the profiled pass moves none
        out["profile_warm"] = profiled(now, cold=False)
        out["profile_cold"] = profiled(now, cold=True)
        reset_states()
    return out


# --- report -------------------------------------------------------------------------------------------------


def verdict(seconds: float) -> str:
    return ("PASS" if seconds < GOAL_S else "MISS") + f" < {GOAL_S:.0f} s"


def report(results: dict, rules: dict, data: dict, timings: dict, machine: dict, args) -> int:
    ref = results["reference"]
    print()
    print(
        f"Alerts bench: {rules['rules']:,} rules over {len(data['regions'])} regions and {len(data['probes'])} targets;"
        f" {data['rows_estimate']:,} measurements (estimate), table {data['table_size']},"
        f" newest {data['newest']:%Y-%m-%d %H:%M:%S} UTC; pass at {results['now']}"
    )
    print(
        f"  rules: {rules['every_target']} on every target, {rules['with_subset']} with a region subset,"
        f" {rules['with_baseline']} with a baseline factor, {rules['with_share_quorum']} with a share quorum;"
        f" {', '.join(f'{k} {v}' for k, v in sorted(rules['by_metric'].items()))};"
        f" {rules['checked_with_refusals']} checked with refusals(), none refused"
    )
    for key, value in timings.items():
        print(f"  {key}: {value:.1f} s" if isinstance(value, float) else f"  {key}: {value}")
    print(
        f"  machine: {machine['usable_cpus']}/{machine['nproc']} CPUs, load {machine['loadavg']},"
        f" Python {machine['python']}, {machine['platform']}"
    )
    print()
    warm = results["warm"]
    rows = [
        ("cold pass (first; baselines from rollups)", results["cold"]["seconds"], None, None, results["cold"], True),
        (
            f"warm passes (N={len(warm['passes'])})",
            warm["median_s"],
            warm["p95_s"],
            warm["max_s"],
            warm,
            True,
        ),
        ("pass at now - 61 min (to pending)", results["pending"]["seconds"], None, None, results["pending"], False),
        (
            "firing pass (storm: every target slower)" if args.storm else "firing pass (incidents written)",
            results["firing"]["seconds"],
            None,
            None,
            results["firing"],
            True,
        ),
        ("next pass (still firing)", results["firing_again"]["seconds"], None, None, results["firing_again"], False),
    ]
    print(f"{'pass':<44} {'median s':>9} {'p95 s':>7} {'max s':>7} {'pairs':>6} {'opened':>6} {'moved':>6}  goal")
    missed = 0
    for label, median, p95, most, r, judged in rows:
        worst = most if most is not None else median
        text = verdict(worst)
        if judged:
            missed += worst >= GOAL_S
        else:
            text = f"({text.split()[0]}, context)"
        spread = f"{p95:7.2f} {most:7.2f}" if p95 is not None and most is not None else f"{'-':>7} {'-':>7}"
        counts = f"{r['pairs']:>6} {r['opened']:>6} {r['moved']:>6}"
        print(f"{label:<44} {median:9.2f} {spread} {counts}  {text}")
    ratio_count = warm["median_s"] / ref["count_s"]
    ratio_fetch = warm["median_s"] / ref["fetch_s"]
    ratio_cold = results["cold"]["seconds"] / ref["fetch_s"]
    print(
        f"{'reference: count(*) of the read window':<44} {ref['count_s']:9.3f}"
        f"   ({ref['window_rows']:,} rows in {ref['window_minutes']} min; warm median {ratio_count:.0f}x it)"
    )
    print(
        f"{'reference: fetch of the window rows':<44} {ref['fetch_s']:9.3f}"
        f"   (warm median {ratio_fetch:.1f}x it, cold pass {ratio_cold:.1f}x)"
    )
    firing = results["firing"]
    print()
    print(
        f"firing pass: {firing['opened']} incidents opened of {firing['pairs']} rule-target pairs"
        f" ({100.0 * firing['opened'] / max(1, firing['pairs']):.0f}%), {firing['global']} global,"
        f" {firing['events']} timeline events; phases {firing['phases']}"
    )
    if firing.get("example"):
        print(f"  e.g. {firing['example']}")
    print(f"  slower rows added {results['slow_rows']} and removed ({results['slow_rows_removed']:,})")
    if args.profile:
        for key in ("profile_cold", "profile_warm", "profile_firing"):
            if key in results:
                print(f"\n--- {key} (cProfile) ---\n{results[key]}")
    print()
    print("result:", "all goals met" if not missed else f"{missed} goal(s) missed")
    if args.json:
        keep = {k: v for k, v in results.items() if not k.startswith("profile")}
        print(json.dumps({"rules": rules, "timings": timings, "machine": machine, "results": keep}, default=str))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=dashboard.BENCH_DB)
    parser.add_argument("--rows", type=int, default=10_000_000, help="the dashboard bench's data (first load)")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--checked", type=int, default=100, help="rules checked with refusals() (a sample)")
    parser.add_argument("--keep-rules", action="store_true", help="leave the rules in the database afterwards")
    parser.add_argument("--profile", action="store_true", help="cProfile a cold, a warm and a firing-state pass")
    parser.add_argument("--storm", action="store_true", help="the firing pass with every target slower everywhere")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.reload = args.rollup = False

    try:
        env = dashboard.bench_env(args.db)
        os.environ.update(env)
        import django

        django.setup()
        timings: dict = {}
        if dashboard.load_interrupted(args.db):
            log(f"alerts bench: {args.db} holds an interrupted load: dropping it")
            dashboard.drop_database(args.db)
        t = time.perf_counter()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput")
        timings["migrate_s"] = time.perf_counter() - t
        data = dashboard.prepare_data(args, env, timings)
        data.update(dashboard.seed_config())  # the bench's probes and regions (get-or-create: already there)
        log(f"alerts bench: {args.rules} rules")
        rules = create_rules(args.rules, data, args.seed, args.checked)
        machine = machine_context()
        try:
            results = measure(args, data)
        finally:
            if not args.keep_rules:
                from probes.alerts.models import AlertRule

                AlertRule.objects.filter(name__startswith=PREFIX).delete()
        return report(results, rules, data, timings, machine, args)
    except BenchError as exc:
        log(f"alerts bench: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
