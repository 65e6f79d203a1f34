#!/usr/bin/env python
"""From slot due to row committed, with 1, 2 and 4 region worker processes for one region.

One region ("bench-workers", with a credential issued for the run) and --probes probes (default 200) at
--interval seconds (default 10) against the mock LLM server on loopback (5 tokens 10 ms apart: a call of
about 50 ms), run by the real scheduler (`manage.py scheduler`), N region workers (`latency-atlas worker
--region bench-workers`, the console script, with only a broker URL and the credential in its environment)
and the real ingest worker (`manage.py ingest_worker`, which also takes the heartbeats). For each N:

  - after a warm-up (the first row, then the next whole interval), a window of --window seconds (default
    60: 1,200 slots at the defaults) whose every slot is due; the scheduler is stopped after the window and
    the queues drained;
  - start jitter = started_at - scheduled_for (the schedule's own lateness: scheduler tick, broker, a free
    worker thread), slot-to-row = ingested_at - scheduled_for (what a dashboard waits), p50 and p95;
  - missed = window slots without a row; doubled = calls the mock server received minus rows stored over
    the whole run (a slot run twice: Postgres' unique slot key keeps one row, the other call is wasted);
    both must be 0;
  - the heartbeat's cost, measured while nothing is due (scheduler stopped, queues drained, 15 s): beats per
    second, the bytes of one beat message on the broker (the ingest worker is paused to read them), and the
    CPU the workers and the ingest worker spend per beat (an upper bound: Celery's idle polling is in it).

The reference is N = 1 in the same process: ratios of the p95s with 2 and 4 workers are printed beside.
Goals: p95 start jitter under 100 ms; no slot missed or doubled.

Own database (latency_bench_workers, ensuredb + migrate, reused), own Redis database (/13, flushed before
and after), own channel-layer prefix; the measurements, workers and beats it wrote are deleted at the end.

    .venv/bin/python bench/workers.py [--workers 1,2,4] [--probes 200] [--interval 10] [--window 60] [--json]

Exit status: 0 when the benchmark ran (goals met or not: see PASS/MISS), 1 when it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from devtools import harness  # noqa: E402
from devtools.harness import BenchError, cpu_by_process, machine_context, manage, wait_for  # noqa: E402

BENCH_DB = "latency_bench_workers"
BENCH_REDIS_DB = 13  # bench/ingest.py uses 14, the test suite 15
CHANNEL_PREFIX = "latency-bench-workers"
REGION = "bench-workers"
GOAL_JITTER_P95_MS = 100.0
IDLE_S = 15.0
HEARTBEAT_S = 5


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


class Child:
    """A child process logging to a file, in its own process group, stopped with SIGTERM."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], folder: Path, cwd: Path = ROOT) -> None:
        self.name = name
        self.log_path = folder / f"{name}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (handed to the child for its lifetime)
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log(f"workers bench: {self.name} ignored SIGTERM; killing it")
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def seed(mock_url: str, probes: int, interval: int) -> tuple:
    """The bench region, target and probes (get-or-create; reruns reuse them), all other probes disabled."""
    from probes.models import Probe, Region, Target

    region, _ = Region.objects.get_or_create(
        slug=REGION,
        defaults={"name": "Bench workers", "city": "Loopback", "country": "ZZ", "latitude": 0.0, "longitude": 0.0},
    )
    if not region.active:
        region.active = True
        region.save(update_fields=["active", "updated_at"])
    target, _ = Target.objects.get_or_create(
        name="bench-workers-target", defaults={"api_style": "openai", "url": mock_url, "model": "mock-model"}
    )
    target.url, target.api_key_env = mock_url, ""
    target.save()
    Probe.objects.exclude(target=target).update(enabled=False)
    mine = []
    for i in range(probes):
        probe, _ = Probe.objects.get_or_create(
            target=target,
            name=f"bench-workers-probe-{i}",
            defaults={"interval_seconds": interval, "timeout_seconds": min(5.0, interval)},
        )
        probe.interval_seconds, probe.timeout_seconds, probe.enabled = interval, min(5.0, interval), True
        probe.save()
        probe.regions.set([region])
        mine.append(probe)
    Probe.objects.filter(target=target).exclude(id__in=[p.id for p in mine]).update(enabled=False)
    return region, mine


def expected_slots(probes: list, start: datetime, end: datetime) -> set[tuple[int, datetime]]:
    from probes.scheduling import slot_offset

    out = set()
    for probe in probes:
        interval = int(probe.interval_seconds)
        offset = slot_offset(probe.id, interval)
        t = int((start.timestamp() - offset) // interval) * interval + offset
        while t < end.timestamp():
            if t >= start.timestamp():
                out.add((probe.id, datetime.fromtimestamp(t, tz=UTC)))
            t += interval
    return out


def clear(region, redis_client) -> None:
    from probes.models import DeadLetter, Measurement, Worker

    Measurement.objects.filter(region=region).delete()
    Worker.objects.filter(region=region).delete()  # their beats go with them (cascade)
    DeadLetter.objects.all().delete()
    redis_client.flushdb()


def worker_command(kind: str = "script") -> list[str]:
    if kind == "manage":  # the release-0.2 way, beside it for comparison
        return [sys.executable, str(ROOT / "manage.py"), "region_worker", "--region", REGION]
    script = Path(sys.executable).with_name("latency-atlas")
    if not script.exists():
        raise BenchError(f"{script} is missing: `make install` installs the console script")
    return [str(script), "worker", "--region", REGION]


def run_once(n: int, args, env: dict, region, probes: list, credential: str, mock, redis_client, folder: Path) -> dict:
    from django.db import connection

    from probes.models import DeadLetter, Measurement, WorkerBeat

    clear(region, redis_client)
    connection.close()
    central = {**os.environ, **env}
    worker_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "LATENCY_BROKER_URL": env["REDIS_URL"],
        "LATENCY_REGION": REGION,
        "LATENCY_REGION_KEY": credential,
        "LATENCY_HEARTBEAT_SECONDS": str(HEARTBEAT_S),
    }
    if args.worker_command == "manage":
        worker_env.update(DJANGO_SETTINGS_MODULE="latency.settings", REDIS_URL=env["REDIS_URL"])
    children: list[Child] = []
    try:
        ingest = Child(f"ingest-{n}", [sys.executable, "manage.py", "ingest_worker"], central, folder)
        children.append(ingest)
        wait_for(lambda: " ready." in ingest.log_text(), 60, message="the ingest worker to be ready")
        workers = [
            Child(f"worker-{n}-{i}", worker_command(args.worker_command), worker_env, folder, cwd=folder)
            for i in range(n)
        ]
        children += workers
        scheduler = Child(f"scheduler-{n}", [sys.executable, "manage.py", "scheduler"], central, folder)
        children.append(scheduler)
        # The mock server's log keeps its last 10,000 requests (a run makes about 2,000), stamped with
        # CLOCK_MONOTONIC: those accepted from here on are this run's.
        mark_ns = time.monotonic_ns()

        wait_for(lambda: Measurement.objects.filter(region=region).exists(), 90, message="a first row")
        dead = [c.name for c in workers if not c.alive()]
        if dead:
            raise BenchError(f"worker(s) {dead} exited:\n{workers[0].log_text()[-2000:]}")
        now = datetime.now(UTC)
        interval = args.interval
        start = datetime.fromtimestamp((int(now.timestamp()) // interval + 2) * interval, tz=UTC)
        end = start + timedelta(seconds=args.window)
        log(f"  {n} worker(s): window {start:%H:%M:%S} - {end:%H:%M:%S}")
        wait_for(lambda: datetime.now(UTC) > end + timedelta(seconds=1), args.window + 3 * interval + 30, interval=0.5)
        scheduler.stop()
        # Drained: every queued run taken and acknowledged, every measurement stored.
        queue = f"probes.{REGION}"
        wait_for(
            lambda: (
                redis_client.llen(queue) == 0 and redis_client.llen("ingest") == 0 and redis_client.hlen("unacked") == 0
            ),
            120,
            interval=0.5,
            message="the queues to drain",
        )
        rows = list(
            Measurement.objects.filter(region=region).values_list(
                "probe_id", "scheduled_for", "started_at", "ingested_at"
            )
        )
        requests = sum(1 for rec in list(mock._log.values()) if rec["accepted_ns"] >= mark_ns)
        want = expected_slots(probes, start, end)
        in_window = [r for r in rows if (r[0], r[1]) in want]
        got = {(r[0], r[1]) for r in in_window}
        jitter = [(r[2] - r[1]).total_seconds() * 1000 for r in in_window]
        to_row = [(r[3] - r[1]).total_seconds() * 1000 for r in in_window]

        # The heartbeat's cost, while nothing is due.
        beats0 = WorkerBeat.objects.filter(worker__region=region).count()
        cpu0, t0 = cpu_by_process(), time.monotonic()
        time.sleep(IDLE_S)  # a measuring interval, not a wait for a condition
        cpu1, idle_s = cpu_by_process(), time.monotonic() - t0
        beats = WorkerBeat.objects.filter(worker__region=region).count() - beats0
        worker_pids = {c.proc.pid for c in workers}

        def cpu_of(pids: set[int]) -> float:
            # The console script's process and its children (none with the threads pool).
            return sum(v - cpu0.get(k, 0.0) for k, v in cpu1.items() if k[0] in pids)

        worker_cpu, ingest_cpu = cpu_of(worker_pids), cpu_of({ingest.proc.pid})
        # The bytes of a beat: with the ingest worker stopped, beats wait in the queue to be read.
        ingest.stop()
        sizes = []
        if args.worker_command == "script":
            wait_for(lambda: redis_client.llen("health") >= n, 3 * HEARTBEAT_S + 10, message="beats waiting")
            sizes = [len(m) for m in redis_client.lrange("health", 0, -1)]
        letters = DeadLetter.objects.count()
        return {
            "workers": n,
            "window_s": args.window,
            "slots": len(want),
            "rows_in_window": len(in_window),
            "missed": len(want - got),
            "requests": requests,
            "rows": len(rows),
            "doubled": requests - len(rows),
            "dead_letters": letters,
            "jitter_p50_ms": percentile(jitter, 50),
            "jitter_p95_ms": percentile(jitter, 95),
            "jitter_max_ms": max(jitter) if jitter else None,
            "slot_to_row_p50_ms": percentile(to_row, 50),
            "slot_to_row_p95_ms": percentile(to_row, 95),
            "beats_per_s": round(beats / idle_s, 2),
            "beat_bytes": round(statistics.median(sizes)) if sizes else None,
            "worker_cpu_ms_per_beat": round(1000 * worker_cpu / beats, 2) if beats else None,
            "ingest_cpu_ms_per_beat": round(1000 * ingest_cpu / beats, 2) if beats else None,
        }
    except (BenchError, AssertionError) as exc:  # wait_for's timeout is an AssertionError
        tails = "\n".join(f"--- {c.name}:\n{c.log_text()[-1500:]}" for c in children)
        raise BenchError(f"{exc}\n{tails}") from None
    finally:
        for child in reversed(children):
            child.stop()


def fmt(value: float | None, unit: str = " ms") -> str:
    return "-" if value is None else f"{value:,.1f}{unit}"


def ratio(value: float | None, ref: float | None) -> str:
    return "-" if not value or not ref else f"{value / ref:.2f}x"


def report(args, machine: dict, runs: list[dict]) -> bool:
    ref = runs[0]
    print(
        f"Region workers: {args.probes} probes every {args.interval} s, one region, window {args.window} s; "
        f"{machine['nproc']} CPUs, load {machine['loadavg']}"
    )
    print(
        f"{'workers':>7} {'slots':>6} {'missed':>6} {'doubled':>7} {'jitter p50':>11} {'p95':>9} {'max':>9} "
        f"{'row p50':>9} {'p95':>9} {'p95 vs 1':>8} {'beats/s':>7} {'B/beat':>6} {'wCPU/beat':>9} {'iCPU/beat':>9}"
    )
    ok = True
    for run in runs:
        print(
            f"{run['workers']:>7} {run['slots']:>6} {run['missed']:>6} {run['doubled']:>7} "
            f"{fmt(run['jitter_p50_ms']):>11} {fmt(run['jitter_p95_ms']):>9} {fmt(run['jitter_max_ms']):>9} "
            f"{fmt(run['slot_to_row_p50_ms']):>9} {fmt(run['slot_to_row_p95_ms']):>9} "
            f"{ratio(run['slot_to_row_p95_ms'], ref['slot_to_row_p95_ms']):>8} {run['beats_per_s']:>7} "
            f"{run['beat_bytes'] or '-':>6} {fmt(run['worker_cpu_ms_per_beat']):>9} "
            f"{fmt(run['ingest_cpu_ms_per_beat']):>9}"
        )
        ok &= run["missed"] == 0 and run["doubled"] == 0
        ok &= run["jitter_p95_ms"] is not None and run["jitter_p95_ms"] < GOAL_JITTER_P95_MS
    worst = max(run["jitter_p95_ms"] or 0 for run in runs)
    print(
        f"goal p95 start jitter < {GOAL_JITTER_P95_MS:.0f} ms (worst {worst:.1f} ms), no slot missed or doubled: "
        f"{'PASS' if ok else 'MISS'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4", help="worker process counts to run (default 1,2,4)")
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--interval", type=int, default=10, help="seconds between a probe's slots (default 10)")
    parser.add_argument("--window", type=int, default=60, help="seconds of slots measured per run (default 60)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary on stdout instead of a table")
    parser.add_argument(
        "--worker-command",
        choices=["script", "manage"],
        default="script",
        help="run `latency-atlas worker` (default) or `manage.py region_worker` as the region workers",
    )
    parser.add_argument("--db-name", default=BENCH_DB)
    parser.add_argument("--redis-db", type=int, default=BENCH_REDIS_DB)
    args = parser.parse_args()
    counts = [int(x) for x in args.workers.split(",") if x.strip()]
    if not counts or min(counts) < 1 or args.probes < 1 or args.interval < 2 or args.window < args.interval:
        parser.error("--workers must be positive counts, --probes >= 1, --interval >= 2, --window >= --interval")

    machine = machine_context()
    try:
        env = harness.bench_env(args.db_name, channel_prefix=CHANNEL_PREFIX, redis_db=args.redis_db)
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput", "-v", "0", timeout=300)
        worker_command(args.worker_command)
    except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
        log(f"workers bench: {exc}")
        return 1
    os.environ.update(env)
    import django

    django.setup()
    import redis as redis_lib

    from devtools.mockllm import running_server
    from probes.fleet.keys import issue_key

    redis_client = redis_lib.Redis.from_url(env["REDIS_URL"])
    runs = []
    region = None
    with running_server() as mock, tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        try:
            region, probes = seed(f"{mock.base_url}/v1/chat/completions?tokens=5&gap_ms=10", args.probes, args.interval)
            credential = issue_key(region, overlap=timedelta(0), note="bench/workers.py").credential
            for n in counts:
                run = run_once(n, args, env, region, probes, credential, mock, redis_client, Path(tmp))
                log(f"    {json.dumps(run)}")
                runs.append(run)
        except BenchError as exc:
            log(f"workers bench: {exc}")
            return 1
        except KeyboardInterrupt:
            log("workers bench: interrupted")
            return 130
        finally:
            if region is not None:
                clear(region, redis_client)
            redis_client.close()
    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(
            json.dumps({"machine": machine, "probes": args.probes, "interval": args.interval, "runs": runs}, indent=2)
        )
    else:
        report(args, machine, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
