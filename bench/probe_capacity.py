#!/usr/bin/env python
"""How many concurrent streaming probes does ONE process sustain while its TTFT error stays within 2 ms?

For each concurrency level, that many cold `engine.measure()` calls start at once in one asyncio loop
in this process, against the mock LLM server running in separate processes (openai stream,
ttft_ms=500, tokens=30, gap_ms=20; every call with its own x-mock-request-id). Each call's TTFT error
is then computed against the server's own first_token_ns on the shared CLOCK_MONOTONIC:

    ttft_error_ms = m.ttft_ms - (first_token_ns - m.start_ns) / 1e6

The server stamps right before it writes, so the error is what lies between the server's write and our
stamp: loopback delivery and, under load, this process's event loop getting round to the socket.
To tell which side saturates, each level also reports
  - server lag = (first_token_ns - headers_sent_ns) - ttft_ms: how late the server's own 500 ms timer
    fired, i.e. the mock server's event loop falling behind (not in our error, but it bunches the work);
  - client loop lag: how late a 5 ms timer fires in this process's loop while the probes run;
  - CPU use of this process and of each mock server process over the level's wall time.

Goal: median TTFT error within 2 ms (p95 shown beside it) with every call ok.

    .venv/bin/python bench/probe_capacity.py [--levels 50,100,200,300,500,750,1000] [--servers 1] [--repeats 1] [--json]

Exit status: 0 when the benchmark ran (whatever the levels reached), 1 when it could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(BENCH))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")

import contextlib  # noqa: E402

import httpx  # noqa: E402
from probe_accuracy import BenchError, MockServer, log, machine_context, percentile  # noqa: E402

from probes import runtime  # noqa: E402
from probes.engine import Engine, ProbeSpec  # noqa: E402

KNOBS = {"ttft_ms": 500, "tokens": 30, "gap_ms": 20}
DEFAULT_LEVELS = "50,100,200,300,500,750,1000"
LAG_TICK_S = 0.005
SETTLE_S = 1.0  # between levels: let the previous level's connections close on both sides
CLK_TCK = os.sysconf("SC_CLK_TCK")


def raise_nofile() -> tuple[int, int]:
    """Soft open-file limit up to the hard limit (children inherit it); returns (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log(f"probe_capacity: cannot raise the open-file limit to {target}: {exc}")
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process, from /proc (None when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime: fields 14 and 15 of stat(5)
    except (OSError, IndexError, ValueError):
        return None


class LoopLag:
    """How late a short timer fires in this loop: the delay any ready socket also waits."""

    def __init__(self) -> None:
        self.samples: list[tuple[int, float]] = []  # (perf_counter_ns when the timer fired, lateness in ms)
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            before = time.perf_counter_ns()
            await asyncio.sleep(LAG_TICK_S)
            now = time.perf_counter_ns()
            self.samples.append((now, max(0.0, (now - before) / 1e6 - LAG_TICK_S * 1e3)))

    def between(self, start_ns: int, end_ns: int) -> list[float]:
        """Lateness of the timers that fired in [start_ns, end_ns + one tick] (perf_counter_ns, which is
        CLOCK_MONOTONIC like the server's stamps)."""
        end_ns += int(LAG_TICK_S * 1e9)
        return [lag for at, lag in self.samples if start_ns <= at <= end_ns]

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def fetch_logs(servers: list[MockServer], wanted: list[tuple[int, str]]) -> dict[str, dict]:
    """Server records by request id; wanted holds (server index, request id)."""
    out: dict[str, dict] = {}
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    clients = [httpx.AsyncClient(base_url=s.base_url, limits=limits, timeout=30, trust_env=False) for s in servers]
    gate = asyncio.Semaphore(16 * len(servers))

    async def one(index: int, rid: str) -> None:
        async with gate:
            resp = await clients[index].get(f"/_mock/log/{rid}")
        if resp.status_code == 200:
            out[rid] = resp.json()

    try:
        await asyncio.gather(*(one(i, rid) for i, rid in wanted))
    except httpx.HTTPError as exc:
        raise BenchError(f"cannot read the mock server's log: {exc}") from exc
    finally:
        for c in clients:
            await c.aclose()
    return out


async def run_round(engine: Engine, servers: list[MockServer], level: int, timeout_s: float) -> dict:
    """One burst of `level` calls started at once; the raw figures, pooled over rounds by run_level."""
    tag = uuid.uuid4().hex[:8]
    jobs = []
    for i in range(level):
        index = i % len(servers)
        rid = f"cap-{level}-{tag}-{i}"
        url = f"{servers[index].base_url}/v1/chat/completions?{urlencode(KNOBS)}"
        jobs.append(
            (
                index,
                rid,
                ProbeSpec(url=url, style="openai", model="m", timeout_s=timeout_s, headers={"x-mock-request-id": rid}),
            )
        )
    lag = LoopLag()
    cpu0 = time.process_time()
    server_cpu0 = [process_cpu_s(s.pid) for s in servers]
    wall0 = time.perf_counter()
    lag.start()
    try:
        # All at once: gather wraps every coroutine in a task before any of them runs.
        measurements = await asyncio.gather(*(engine.measure(spec) for _, _, spec in jobs))
    finally:
        await lag.stop()
    wall = time.perf_counter() - wall0
    client_cpu = time.process_time() - cpu0
    server_cpu = [
        None if a is None or b is None else b - a
        for a, b in zip(server_cpu0, (process_cpu_s(s.pid) for s in servers), strict=True)
    ]

    ok = [(index, rid, m) for (index, rid, _), m in zip(jobs, measurements, strict=True) if m.outcome == "ok"]
    records = await fetch_logs(servers, [(index, rid) for index, rid, _ in ok])
    out = {
        "outcomes": Counter(m.outcome for m in measurements),
        "ok": len(ok),
        "unscored": 0,
        "failures": [m.error for m in measurements if m.outcome != "ok"][:3],
        "errors": [],
        "ttfb_errors": [],
        "server_lags": [],
        "loop_lags": [],
        "wall_s": wall,
        "client_cpu_s": client_cpu,
        "server_cpu_s": server_cpu,
        "first_token_spread_ms": None,
    }
    first_tokens = []
    for _, rid, m in ok:
        rec = records.get(rid)
        if rec is None or m.ttft_ms is None or rec.get("first_token_ns") is None or rec.get("headers_sent_ns") is None:
            out["unscored"] += 1
            continue
        out["errors"].append(m.ttft_ms - (rec["first_token_ns"] - m.start_ns) / 1e6)
        out["ttfb_errors"].append(m.ttfb_ms - (rec["headers_sent_ns"] - m.start_ns) / 1e6)
        out["server_lags"].append((rec["first_token_ns"] - rec["headers_sent_ns"]) / 1e6 - KNOBS["ttft_ms"])
        first_tokens.append(rec["first_token_ns"])
    if first_tokens:
        # The loop's lateness while first tokens were arriving (the connection burst at the start is not in it).
        out["loop_lags"] = lag.between(min(first_tokens), max(first_tokens)) or [x[1] for x in lag.samples]
        out["first_token_spread_ms"] = (max(first_tokens) - min(first_tokens)) / 1e6
    return out


async def run_level(
    engine: Engine, servers: list[MockServer], level: int, goal_ms: float, timeout_s: float, repeats: int
) -> dict:
    rounds = []
    for i in range(repeats):
        if i:
            await asyncio.sleep(SETTLE_S)
        rounds.append(await run_round(engine, servers, level, timeout_s))

    def pooled(key: str) -> list[float]:
        return [v for r in rounds for v in r[key]]

    errors, ttfb_errors, server_lags, loop_lags = (
        pooled(k) for k in ("errors", "ttfb_errors", "server_lags", "loop_lags")
    )
    outcomes = sum((r["outcomes"] for r in rounds), Counter())
    if not errors:
        raise BenchError(
            f"level {level}: no call could be scored; outcomes {dict(outcomes)}, e.g. {rounds[0]['failures']}"
        )
    wall = sum(r["wall_s"] for r in rounds)
    server_cpu = [
        None
        if any(r["server_cpu_s"][i] is None for r in rounds)
        else sum(r["server_cpu_s"][i] for r in rounds) / wall * 100
        for i in range(len(servers))
    ]
    median, p95 = percentile(errors, 0.5), percentile(errors, 0.95)
    res = {
        "level": level,
        "repeats": repeats,
        "calls": level * repeats,
        "ok": sum(r["ok"] for r in rounds),
        "scored": len(errors),
        "outcomes": dict(outcomes),
        "unscored": sum(r["unscored"] for r in rounds),
        "ttft_error_ms": {"median": median, "p95": p95, "max": max(errors)},
        "ttfb_error_ms": {"median": percentile(ttfb_errors, 0.5), "p95": percentile(ttfb_errors, 0.95)},
        "server_lag_ms": {
            "median": percentile(server_lags, 0.5),
            "p95": percentile(server_lags, 0.95),
            "max": max(server_lags),
        },
        "client_loop_lag_ms": {
            "median": percentile(loop_lags, 0.5),
            "p95": percentile(loop_lags, 0.95),
            "max": max(loop_lags) if loop_lags else None,
            "samples": len(loop_lags),
        },
        "first_token_spread_ms": [r["first_token_spread_ms"] for r in rounds],
        "client_cpu_pct": sum(r["client_cpu_s"] for r in rounds) / wall * 100,
        "server_cpu_pct": server_cpu,
        "wall_s": wall / repeats,
        "median_within_goal": median <= goal_ms,
        "p95_within_goal": p95 <= goal_ms,
    }
    res["meets_goal"] = len(errors) == level * repeats and res["median_within_goal"]
    client_side = (res["client_loop_lag_ms"]["p95"] or 0) > goal_ms
    server_side = res["server_lag_ms"]["p95"] > goal_ms
    res["lagging"] = {(True, True): "both", (True, False): "client", (False, True): "server"}.get(
        (client_side, server_side), "none"
    )
    return res


def fmt(value: float | None, width: int = 7, digits: int = 2) -> str:
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def print_row(r: dict) -> None:
    e, s, c = r["ttft_error_ms"], r["server_lag_ms"], r["client_loop_lag_ms"]
    scpu = "/".join(f"{x:.0f}" if x is not None else "-" for x in r["server_cpu_pct"])
    print(
        f"{r['level']:>6} {r['ok']:>5} {fmt(e['median'])} {fmt(e['p95'])} {fmt(e['max'], 8)}  "
        f"{fmt(s['median'])} {fmt(s['p95'])}  {fmt(c['p95'])} {fmt(c['max'], 8)}  "
        f"{r['client_cpu_pct']:>5.0f} {scpu:>7}  {r['wall_s']:>5.1f}  "
        f"{'PASS' if r['median_within_goal'] else 'MISS'}/{'PASS' if r['p95_within_goal'] else 'MISS'}"
        f"{'' if r['scored'] == r['calls'] else ' (not all ok)'}  {r['lagging']}",
        flush=True,
    )


async def main_async(args: argparse.Namespace, levels: list[int], nofile: tuple[int, int]) -> dict:
    servers: list[MockServer] = []
    engine = Engine()
    results: list[dict] = []
    try:
        for _ in range(args.servers):
            servers.append(MockServer())
            servers[-1].start()
        log("mock servers: " + ", ".join(f"pid {s.pid} at {s.base_url}" for s in servers))
        # Lazy imports, first connections, thread pools: paid here, not in the first level.
        warm = [
            ProbeSpec(url=f"{s.base_url}/v1/chat/completions?tokens=2", style="openai", model="m")
            for s in servers
            for _ in range(3)
        ]
        for m in await asyncio.gather(*(engine.measure(spec) for spec in warm)):
            if m.outcome != "ok":
                raise BenchError(f"warm-up call failed: {m.outcome}: {m.error}")
        if not args.json:
            machine = machine_context()
            print("Probe capacity: concurrent cold streaming probes in ONE process (one asyncio loop)")
            print(
                f"  mock server: {len(servers)} separate process(es); each call openai stream "
                + " ".join(f"{k}={v}" for k, v in KNOBS.items())
                + "; literal 127.0.0.1, so no DNS"
            )
            print(
                f"  machine: nproc {machine['nproc']}, load average "
                f"{' '.join(f'{x:.2f}' for x in machine['loadavg'] or [])} at start; open files {nofile[0]}"
            )
            print(
                f"  goal: median TTFT error within {args.goal_ms:g} ms with every call ok (p95 shown too); "
                f"{args.repeats} burst(s) per level, pooled"
            )
            print()
            print("                TTFT error vs server, ms     server lag, ms  client loop lag   CPU %         goal")
            print(
                " level    ok  median     p95      max   median     p95      p95      max  client  server  "
                "wall s  med/p95  lag>goal"
            )
        for level in levels:
            if level * 2 + 64 > nofile[0]:
                log(f"probe_capacity: level {level} may run out of file descriptors (limit {nofile[0]})")
            res = await run_level(engine, servers, level, args.goal_ms, args.timeout, args.repeats)
            results.append(res)
            if not args.json:
                print_row(res)
            await asyncio.sleep(SETTLE_S)
    finally:
        await engine.aclose()
        for s in servers:
            s.stop()
    meeting = [r["level"] for r in results if r["meets_goal"]]
    return {
        "knobs": KNOBS,
        "goal_ms": args.goal_ms,
        "servers": args.servers,
        "levels": results,
        "highest_level_meeting_goal": max(meeting) if meeting else None,
        "all_levels_up_to_highest_meet_goal": bool(meeting)
        and all(r["meets_goal"] for r in results if r["level"] <= max(meeting)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default=DEFAULT_LEVELS, help=f"concurrency levels (default {DEFAULT_LEVELS})")
    parser.add_argument(
        "--servers", type=int, default=1, help="mock server processes, calls spread round-robin over them (default 1)"
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="bursts per level, their calls pooled into one distribution (default 1)"
    )
    parser.add_argument("--goal-ms", type=float, default=2.0, help="TTFT error goal (default 2 ms)")
    parser.add_argument("--timeout", type=float, default=60.0, help="per-call deadline in seconds (default 60)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary on stdout instead of the table")
    args = parser.parse_args()
    try:
        levels = [int(x) for x in args.levels.split(",") if x.strip()]
    except ValueError:
        parser.error("--levels takes comma-separated integers")
    if not levels or min(levels) < 1 or args.servers < 1 or args.repeats < 1:
        parser.error("levels, --servers and --repeats must be positive")
    nofile = raise_nofile()
    try:
        summary = runtime.run(main_async(args, levels, nofile))
    except BenchError as exc:
        log(f"probe_capacity: {exc}")
        return 1
    except KeyboardInterrupt:
        log("probe_capacity: interrupted")
        return 130
    summary["machine"] = machine_context()
    summary["open_files_limit"] = nofile[0]
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    best = summary["highest_level_meeting_goal"]
    print()
    print("  TTFT error: our ttft_ms - (server first_token_ns - our start_ns); the server stamps right before")
    print("  writing, so this is delivery plus this process's delay in reading the socket.")
    print("  server lag: (first_token_ns - headers_sent_ns) - ttft_ms, the mock's own timer lateness;")
    print("  client loop lag: lateness of a 5 ms timer in this loop while the first tokens arrived (from the")
    print("  first first_token_ns to the last). lag>goal: which side's p95 lag (server lag, client loop lag)")
    print(f"  is above {args.goal_ms:g} ms, i.e. which side is falling behind.")
    print("  CPU %: of one core, over the level's wall time (user + system as the kernel accounts it).")
    print(f"  machine at end: load average {' '.join(f'{x:.2f}' for x in summary['machine']['loadavg'] or [])}")
    print()
    if best is None:
        print(f"RESULT: no level met the goal (median TTFT error within {args.goal_ms:g} ms, all calls ok)")
    else:
        note = "" if summary["all_levels_up_to_highest_meet_goal"] else " (some lower level missed it: noise)"
        print(f"RESULT: highest level meeting the goal: {best} concurrent streaming probes{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
