#!/usr/bin/env python
"""How many measurements per second does the ingest pipeline move from its queue into Postgres?

N measurements (default 50,000) are published into the "ingest" queue exactly as region workers
publish them: per region, lists of --per-message measurements, each list a sealed results message
signed with that region's credential (probes.worker.protocol.seal; a key is issued per region for the
run), `app.send_task("probes.ingest", args=[sealed], queue="ingest")`, JSON, Celery protocol 2, BEFORE
any worker runs. The ingest verifies every message (one key query per batch, one Ed25519 check per
message), so the rates include that cost; signing happens before the timed publish. Then
`manage.py ingest_worker` is started as a child process and timed until `SELECT count(*)` of
probes_measurement reaches N:

  - steady rate = N / (start of the first batch -> last row committed). The start of the first batch
    is min(ingested_at): store() stamps every row of a batch with the same time, before its INSERT;
    the end is the first poll that sees all N rows (polled every 20 ms);
  - from-ready rate = N / (the worker's "ready." log line -> last row committed);
  - wall rate = N / (process start -> last row committed), Python and Celery start-up included.

In the same run, the same N rows (validated by probes.ingest.clean, then written as CSV in memory,
untimed) are loaded with one psycopg `COPY ... FROM STDIN (FORMAT csv)` and one commit:
  - into a fresh scratch table `CREATE TABLE ... (LIKE probes_measurement INCLUDING ALL)`: the same
    columns, defaults, CHECKs, indexes and unique constraint, but no foreign keys (LIKE never copies
    them), shown as a stricter reference;
  - into the real probes_measurement after TRUNCATE (foreign keys checked, as ingest's own inserts
    are): the same rows into the same table, the reference for the ratio goal.

Goals (issue 52): steady ingest >= 2,000 measurements/s, >= 0.5 x the COPY rate into the same table (the
ratio to the scratch-table COPY is printed beside it), and at most 0.05 ms of the worker's CPU per
measurement while it ingests: its user + system time from its "ready." line to the last row committed
(the time from process start, Python and Celery start-up included, is printed beside it).

Everything runs in its own database (latency_bench, created with `manage.py ensuredb` and migrated,
reused when present) and its own Redis database (/14, flushed before and after), with its own
channel-layer prefix; the measurements it wrote are truncated and the scratch table dropped at the
end (the bench targets and probes stay in latency_bench for the next run; --drop-db drops it).

    .venv/bin/python bench/ingest.py [--count 50000] [--repeats 1] [--json] [--profile] [--drop-db]

--profile adds an in-process run of probes.ingest.ingest_messages() on batches of the same sealed messages
(about 500 measurements each, no Celery, no broker): the open-and-store ceiling, and cProfile's top
functions for one batch.

Exit status: 0 when the benchmark ran (goals met or not: see PASS/MISS), 1 when it could not run or
the stored rows were wrong.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

# The workload (bench/workload.py): realistic payloads, one distinct slot each, and their CSV for COPY.
from workload import build_csv, make_payloads, seed_rows  # noqa: E402

from devtools import harness  # noqa: E402
from devtools.harness import (  # noqa: E402
    CLK_TCK,
    BenchError,
    cpu_by_process,
    machine_context,
    machine_ticks,
    manage,
)

GOAL_RATE = 2000.0  # measurements per second, steady state
GOAL_RATIO = 0.5  # of the raw COPY rate into the same table
GOAL_CPU_MS = 0.05  # worker CPU per measurement, from its "ready." line to the last row
BENCH_DB = "latency_bench"
BENCH_REDIS_DB = 14  # the test suite uses 15
CHANNEL_PREFIX = "latency-bench"
SCRATCH_TABLE = "bench_copy_scratch"
POLL_S = 0.02
BATCH = 500  # IngestBatch.flush_every


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of one process so far, from /proc (as cpu_by_process)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_split(
    before: dict, after: dict, worker_pid: int, ticks0: tuple[int, int], ticks1: tuple[int, int], wall_s: float
) -> dict:
    """CPU seconds spent over one phase by the worker, Postgres, Redis and the rest; machine busy %."""
    split = {"worker": 0.0, "postgres": 0.0, "redis": 0.0, "bench": 0.0, "other": 0.0}
    for (pid, comm), cpu in after.items():
        used = cpu - before.get((pid, comm), 0.0)
        if pid == worker_pid:
            split["worker"] += used
        elif comm == "postgres":
            split["postgres"] += used
        elif comm.startswith("redis-server"):
            split["redis"] += used
        elif pid == os.getpid():
            split["bench"] += used
        else:
            split["other"] += used
    total, idle = ticks1[0] - ticks0[0], ticks1[1] - ticks0[1]
    out = {f"{k}_cpu_s": round(v, 2) for k, v in split.items()}
    out["worker_cores"] = round(split["worker"] / wall_s, 2) if wall_s > 0 else None
    out["machine_busy_pct"] = round(100 * (1 - idle / total), 1) if total else None
    return out


# --- environment: our own database, Redis database and channel prefix -------------------------------


def bench_env(db_name: str, redis_db: int) -> dict[str, str]:
    return harness.bench_env(db_name, channel_prefix=CHANNEL_PREFIX, redis_db=redis_db)


# --- database helpers (a plain psycopg connection, not Django's) ------------------------------------


def pg_connect(autocommit: bool = True):
    import psycopg
    from django.conf import settings

    db = settings.DATABASES["default"]
    params = {
        "dbname": db["NAME"],
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or None,
        "port": db["PORT"] or None,
        **db.get("OPTIONS", {}),
    }
    return psycopg.connect(**{k: v for k, v in params.items() if v is not None}, autocommit=autocommit)


def truncate_measurements(conn) -> None:
    conn.execute("TRUNCATE probes_measurement RESTART IDENTITY")


def table_exists(conn, name: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", [name]).fetchone()[0]


def copy_rows(conn, table: str, data: bytes) -> float:
    from probes.ingest import COLUMNS

    conn.autocommit = False
    try:
        t0 = time.perf_counter()
        with conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN (FORMAT csv)") as cp:
            view = memoryview(data)
            for i in range(0, len(data), 1 << 20):
                cp.write(view[i : i + (1 << 20)])
        conn.commit()
        return time.perf_counter() - t0
    finally:
        conn.autocommit = True


# --- the worker, as a process of its own -------------------------------------------------------------


class Worker:
    """`manage.py ingest_worker` in a child process: started, its log read, stopped with SIGTERM."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.lines: list[tuple[float, str]] = []
        self.started = 0.0
        self.ready_at: float | None = None
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        self.started = time.time()
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "ingest_worker", "--name", "bench-ingest@%h"],
            cwd=ROOT,
            env={**os.environ, **self.env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            now = time.time()
            self.lines.append((now, line.rstrip("\n")))
            if self.ready_at is None and line.rstrip().endswith(" ready."):
                self.ready_at = now

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def stop(self, timeout: float = 20.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)  # warm shutdown: finishes the batch in hand
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log("ingest bench: the worker did not stop on SIGTERM; killing it")
            self.proc.kill()
            self.proc.wait(10)
        if self._reader is not None:
            self._reader.join(5)


# --- one repeat --------------------------------------------------------------------------------------


PER_MESSAGE = 25


def region_credentials() -> dict[int, tuple[str, object]]:
    """region id -> (slug, a credential issued for this run). The bench's own database: its
    earlier runs' keys are deleted first."""
    from probes.fleet.keys import issue_key
    from probes.models import Region, RegionKey
    from probes.worker.protocol import Credential

    RegionKey.objects.all().delete()
    return {
        region.id: (region.slug, Credential.parse(issue_key(region).credential))
        for region in Region.objects.order_by("id")
    }


def seal_messages(payloads: list[dict], credentials: dict, seed: int) -> list[dict]:
    """As region workers send them: each region's measurements in lists of PER_MESSAGE, each list one
    sealed results message; regions interleaved in no particular order."""
    from probes.worker.protocol import RESULTS, seal

    by_region: dict[int, list[dict]] = {}
    for payload in payloads:
        by_region.setdefault(payload["region_id"], []).append(payload)
    messages = []
    for region_id, items in by_region.items():
        slug, credential = credentials[region_id]
        for i in range(0, len(items), PER_MESSAGE):
            messages.append(seal(RESULTS, slug, credential, items[i : i + PER_MESSAGE]))
    random.Random(seed).shuffle(messages)
    return messages


def publish(messages: list[dict]) -> float:
    from latency.celery import app

    # The same call as a region worker: one sealed list of measurements per message. A worker sends
    # up to 100 per message, or what 0.2 s brought; PER_MESSAGE (--per-message) stands for a fleet of
    # region workers each running a few dozen probes a second. Published through one producer whose
    # Redis LPUSHes kombu pipelines 1,000 at a time (Producer.batch).
    t0 = time.perf_counter()
    with app.producer_or_acquire() as producer, producer.batch(max_size=1000):
        for message in messages:
            app.send_task("probes.ingest", args=[message], queue="ingest", producer=producer)
    return time.perf_counter() - t0


def run_ingest(
    env: dict[str, str], conn, redis_client, payloads: list[dict], sealed: list[dict], timeout_s: float
) -> dict:
    n = len(payloads)
    truncate_measurements(conn)
    redis_client.flushdb()
    publish_s = publish(sealed)
    queued = redis_client.llen("ingest")
    messages = len(sealed)
    if queued != messages:
        raise BenchError(f"published {messages} messages but the ingest queue holds {queued}")
    log(
        f"  published {n} measurements in {messages} sealed messages (up to {PER_MESSAGE} each) in"
        f" {publish_s:.2f} s ({n / publish_s:,.0f}/s); starting the worker"
    )

    cpu0, ticks0 = cpu_by_process(), machine_ticks()
    worker = Worker(env)
    worker.start()
    first_seen = first_count = done_at = None
    ready_cpu: float | None = None  # the worker's CPU seconds when its "ready." line was read
    count = 0
    try:
        deadline = worker.started + timeout_s
        while time.time() < deadline:
            if not worker.alive():
                raise BenchError(f"the ingest worker exited ({worker.proc.returncode}):\n{worker.log_text()[-3000:]}")
            if ready_cpu is None and worker.ready_at is not None:
                ready_cpu = process_cpu(worker.proc.pid)
            top = conn.execute("SELECT max(id) FROM probes_measurement").fetchone()[0]  # index lookup: cheap
            now = time.time()
            if top is not None and first_seen is None:
                first_seen = now
                first_count = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
            # ids are taken in INSERT order, commits may land out of order: count only near the end
            if top is not None and top >= n:
                count = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
                if count >= n:
                    done_at = time.time()
                    break
            time.sleep(POLL_S)
        else:
            count = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
        cpu = cpu_split(cpu0, cpu_by_process(), worker.proc.pid, ticks0, machine_ticks(), time.time() - worker.started)
        cpu["worker_after_ready_cpu_s"] = round(cpu["worker_cpu_s"] - ready_cpu, 2) if ready_cpu is not None else None
        # Acknowledgements follow each batch's commit: give the last ones a moment.
        ack_deadline = time.time() + 10
        while time.time() < ack_deadline and (redis_client.hlen("unacked") or redis_client.llen("ingest")):
            time.sleep(0.05)
        unacked, left = redis_client.hlen("unacked"), redis_client.llen("ingest")
    finally:
        worker.stop()
    first_batch = conn.execute("SELECT extract(epoch FROM min(ingested_at)) FROM probes_measurement").fetchone()[0]
    batches = conn.execute(
        "SELECT count(*), avg(c), min(c), max(c)"
        " FROM (SELECT count(*) AS c FROM probes_measurement GROUP BY ingested_at) b"
    ).fetchone()
    text = worker.log_text()
    out = {
        "count": n,
        "stored": count,
        "publish_s": round(publish_s, 3),
        "publish_per_s": round(n / publish_s, 1),
        "startup_s": round(worker.ready_at - worker.started, 3) if worker.ready_at else None,
        "batches": batches[0],
        "batch_rows_mean": round(float(batches[1]), 1) if batches[1] is not None else None,
        "batch_rows_min": batches[2],
        "batch_rows_max": batches[3],
        "broker_left": left,
        "broker_unacked": unacked,
        "worker_warnings": sum(1 for line in text.splitlines() if " WARNING " in line or " ERROR " in line),
        "completed": done_at is not None,
        "cpu": cpu,
    }
    if done_at is None:
        out.update(
            steady_per_s=None,
            from_ready_per_s=None,
            wall_per_s=None,
            wall_s=None,
            steady_s=None,
            reached_in_timeout=count,
        )
        log(f"  the worker stored {count} of {n} rows within {timeout_s:.0f} s:\n{text[-2000:]}")
        return out
    steady_s = done_at - float(first_batch)
    out.update(
        steady_s=round(steady_s, 3),
        steady_per_s=round(n / steady_s, 1),
        polled_per_s=round((n - first_count) / (done_at - first_seen), 1) if done_at > first_seen else None,
        from_ready_s=round(done_at - worker.ready_at, 3) if worker.ready_at else None,
        from_ready_per_s=round(n / (done_at - worker.ready_at), 1) if worker.ready_at else None,
        wall_s=round(done_at - worker.started, 3),
        wall_per_s=round(n / (done_at - worker.started), 1),
        first_row_after_ready_s=round(float(first_batch) - worker.ready_at, 3) if worker.ready_at else None,
    )
    return out


def verify(conn, payloads: list[dict], seed: int) -> dict:
    """All N slots stored once, and sampled rows equal to their payloads field by field."""
    from probes.ingest import COLUMNS, FLOAT_FIELDS, INT_FIELDS, TEXT_FIELDS

    problems = []
    n = len(payloads)
    count = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
    if count != n:
        problems.append(f"count {count} != {n}")
    dups = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM probes_measurement GROUP BY probe_id, region_id, "
        "scheduled_for HAVING count(*) > 1) d"
    ).fetchone()[0]
    if dups:
        problems.append(f"{dups} duplicated slots")
    stored = {
        (p, r, s) for p, r, s in conn.execute("SELECT probe_id, region_id, scheduled_for FROM probes_measurement")
    }
    expected = {(p["probe_id"], p["region_id"], datetime.fromisoformat(p["scheduled_for"])) for p in payloads}
    if stored != expected:
        problems.append(f"{len(expected - stored)} slots missing, {len(stored - expected)} unexpected")
    rng = random.Random(seed + 1)
    sample = rng.sample(payloads, min(50, n))
    # Make sure failures and NULL-heavy rows are in the sample.
    sample += [p for p in payloads if p["result"]["outcome"] != "ok"][:5]
    sample += [p for p in payloads if p["result"]["connection"] == "warm"][:5]
    fields = [c for c in COLUMNS if c not in ("ingested_at",)]
    checked = 0
    for p in sample:
        row = conn.execute(
            f"SELECT {', '.join(fields)} FROM probes_measurement WHERE probe_id = %s AND region_id = %s "
            "AND scheduled_for = %s",
            [p["probe_id"], p["region_id"], datetime.fromisoformat(p["scheduled_for"])],
        ).fetchone()
        if row is None:
            problems.append(f"sample slot missing: {p['probe_id']}/{p['region_id']}/{p['scheduled_for']}")
            continue
        got = dict(zip(fields, row, strict=True))
        res = p["result"]
        want = {
            "probe_id": p["probe_id"],
            "target_id": p["target_id"],
            "region_id": p["region_id"],
            "scheduled_for": datetime.fromisoformat(p["scheduled_for"]),
            "started_at": datetime.fromisoformat(res["started_at"]),
            "worker": p["worker"],
            "outcome": res["outcome"],
            "connection": res["connection"],
            "tokens_estimated": res["tokens_estimated"],
        }
        for name in (*FLOAT_FIELDS, *INT_FIELDS, *TEXT_FIELDS):
            want[name] = res[name]
        for name, value in want.items():
            if got[name] != value:
                problems.append(
                    f"slot {p['probe_id']}/{p['region_id']}/{p['scheduled_for']}: {name} = "
                    f"{got[name]!r}, payload has {value!r}"
                )
        checked += 1
    return {"ok": not problems, "rows": count, "duplicates": dups, "sampled_rows": checked, "problems": problems[:20]}


def run_copy(conn, data: bytes, n: int) -> dict:
    conn.execute(f"DROP TABLE IF EXISTS {SCRATCH_TABLE}")
    conn.execute(f"CREATE TABLE {SCRATCH_TABLE} (LIKE probes_measurement INCLUDING ALL)")
    try:
        scratch_s = copy_rows(conn, SCRATCH_TABLE, data)
        copied = conn.execute(f"SELECT count(*) FROM {SCRATCH_TABLE}").fetchone()[0]
        if copied != n:
            raise BenchError(f"COPY into the scratch table stored {copied} rows, not {n}")
    finally:
        conn.execute(f"DROP TABLE IF EXISTS {SCRATCH_TABLE}")
    truncate_measurements(conn)
    real_s = copy_rows(conn, "probes_measurement", data)
    copied = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
    truncate_measurements(conn)
    if copied != n:
        raise BenchError(f"COPY into probes_measurement stored {copied} rows, not {n}")
    return {
        "scratch_s": round(scratch_s, 3),
        "scratch_per_s": round(n / scratch_s, 1),
        "real_s": round(real_s, 3),
        "real_per_s": round(n / real_s, 1),
        "csv_bytes": len(data),
    }


# --- in-process store() (optional): the ceiling without Celery, and where a batch's time goes -------


def profile_store(conn, sealed: list[dict]) -> dict:
    from django.db import connection as dj

    from probes.ingest import ingest_messages

    truncate_measurements(conn)
    # About BATCH measurements per batch, as the worker's batches of messages hold.
    per_batch = max(1, BATCH // PER_MESSAGE)
    batches = [[((m,), {}, "bench") for m in sealed[i : i + per_batch]] for i in range(0, len(sealed), per_batch)]

    def measurements(batch) -> int:
        return sum(message[0][0]["body"].count('"probe_id"') for message in batch)

    t0 = time.perf_counter()
    for batch in batches[:-1]:
        ingest_messages(batch)
    elapsed = time.perf_counter() - t0
    rows = sum(measurements(b) for b in batches[:-1])
    profiler = cProfile.Profile()
    profiler.enable()
    ingest_messages(batches[-1])
    profiler.disable()
    dj.close()
    truncate_measurements(conn)
    buf = io.StringIO()
    pstats.Stats(profiler, stream=buf).sort_stats("cumulative").print_stats(25)
    return {
        "rows": rows,
        "seconds": round(elapsed, 3),
        "per_s": round(rows / elapsed, 1) if elapsed else None,
        "ms_per_batch": round(1000 * elapsed / max(1, len(batches) - 1), 2),
        "cprofile_last_batch": buf.getvalue(),
    }


# --- report ------------------------------------------------------------------------------------------


def median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(statistics.median(vals), 1) if vals else None


def median_ms(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def fmt(value: float | None, unit: str = "/s") -> str:
    return "-" if value is None else f"{value:,.0f}{unit}"


def summarize(runs: list[dict]) -> dict:
    steady = median([r["ingest"]["steady_per_s"] for r in runs])
    scratch = median([r["copy"]["scratch_per_s"] for r in runs])
    ratios = [
        r["ingest"]["steady_per_s"] / r["copy"]["real_per_s"]
        for r in runs
        if r["ingest"]["steady_per_s"] and r["copy"]["real_per_s"]
    ]
    ratio = round(statistics.median(ratios), 3) if ratios else None
    scratch_ratios = [
        r["ingest"]["steady_per_s"] / r["copy"]["scratch_per_s"]
        for r in runs
        if r["ingest"]["steady_per_s"] and r["copy"]["scratch_per_s"]
    ]
    scratch_ratio = round(statistics.median(scratch_ratios), 3) if scratch_ratios else None
    cpu_ms = median_ms(
        [
            1000 * r["ingest"]["cpu"]["worker_after_ready_cpu_s"] / r["ingest"]["count"]
            for r in runs
            if r["ingest"]["completed"] and r["ingest"]["cpu"]["worker_after_ready_cpu_s"] is not None
        ]
    )
    return {
        "steady_per_s": steady,
        "from_ready_per_s": median([r["ingest"]["from_ready_per_s"] for r in runs]),
        "wall_per_s": median([r["ingest"]["wall_per_s"] for r in runs]),
        "publish_per_s": median([r["ingest"]["publish_per_s"] for r in runs]),
        "copy_scratch_per_s": scratch,
        "copy_real_per_s": median([r["copy"]["real_per_s"] for r in runs]),
        "ratio_to_copy": ratio,
        "ratio_to_scratch_copy": scratch_ratio,
        "worker_cpu_ms_per_measurement": cpu_ms,
        "goals": [
            {
                "goal": f"steady ingest >= {GOAL_RATE:,.0f} measurements/s",
                "value": steady,
                "pass": steady is not None and steady >= GOAL_RATE,
            },
            {
                "goal": f"ingest >= {GOAL_RATIO} x raw COPY into the same table",
                "value": ratio,
                "pass": ratio is not None and ratio >= GOAL_RATIO,
            },
            {
                "goal": f"worker CPU <= {GOAL_CPU_MS} ms per measurement (from its ready line)",
                "value": cpu_ms,
                "pass": cpu_ms is not None and cpu_ms <= GOAL_CPU_MS,
                "unit": "ms",
            },
        ],
        "verified": all(r["verify"]["ok"] for r in runs),
    }


def report(args, machine: dict, env: dict, runs: list[dict], summary: dict, prof: dict | None) -> None:
    print(
        f"ingest bench: {args.count:,} measurements, {args.repeats} repeat(s); nproc {machine['nproc']} "
        f"(usable {machine['usable_cpus']}), load average {machine['loadavg']} at start, "
        f"{machine['loadavg_end']} at end; Python {machine['python']}"
    )
    print(
        f"database {env['DATABASE_URL']}, broker {env['REDIS_URL']}; worker: manage.py ingest_worker "
        f"(threads -c 2, prefetch 1000, batches of {BATCH} / 0.1 s)"
    )
    print()
    head = (
        f"{'run':>3} {'publish':>9} {'startup':>8} {'steady':>9} {'ready->done':>12} {'wall':>9} "
        f"{'batches':>8} {'rows/batch':>10} {'COPY scratch':>13} {'COPY real':>10} {'ratio':>6}  verify"
    )
    print(head)
    for i, r in enumerate(runs, 1):
        ing, cp, ver = r["ingest"], r["copy"], r["verify"]
        ratio = ing["steady_per_s"] / cp["real_per_s"] if ing["steady_per_s"] and cp["real_per_s"] else None
        print(
            f"{i:>3} {fmt(ing['publish_per_s']):>9} "
            f"{_secs(ing['startup_s']):>8} {fmt(ing['steady_per_s']):>9} {fmt(ing['from_ready_per_s']):>12} "
            f"{fmt(ing['wall_per_s']):>9} {ing['batches']:>8} {_num(ing['batch_rows_mean']):>10} "
            f"{fmt(cp['scratch_per_s']):>13} {fmt(cp['real_per_s']):>10} "
            f"{'-' if ratio is None else f'{ratio:.2f}':>6}  {'ok' if ver['ok'] else 'FAILED'}"
        )
    print()
    print("rates in measurements (rows) per second; steady = N / (first batch start -> last row committed);")
    print("ready->done from the worker's 'ready.' line; wall from process start (start-up included);")
    print("COPY scratch = one COPY + commit into a fresh LIKE probes_measurement INCLUDING ALL table (no FKs);")
    print("COPY real = the same into probes_measurement after TRUNCATE (FKs checked). Ratio = steady / COPY real.")
    for i, r in enumerate(runs, 1):
        ing, ver = r["ingest"], r["verify"]
        print(
            f"run {i}: {ing['stored']:,} rows stored, {ver['duplicates']} duplicate slots, "
            f"{ver['sampled_rows']} sampled rows equal to their payloads: {'ok' if ver['ok'] else 'FAILED'}; "
            f"broker afterwards: {ing['broker_left']} queued, {ing['broker_unacked']} unacked; "
            f"batches {ing['batch_rows_min']}..{ing['batch_rows_max']} rows; "
            f"worker warnings/errors: {ing['worker_warnings']}; "
            f"first row {_secs(ing.get('first_row_after_ready_s'))} after ready"
        )
        c = ing["cpu"]
        print(
            f"       CPU from worker start to the last row: worker {c['worker_cpu_s']:.1f} s "
            f"({c['worker_cores']:.2f} of a core, {1000 * c['worker_cpu_s'] / args.count:.3f} ms per measurement; "
            f"from its ready line {_ms_per(c['worker_after_ready_cpu_s'], args.count)}), "
            f"Postgres {c['postgres_cpu_s']:.1f} s, Redis {c['redis_cpu_s']:.1f} s,"
            f" this bench {c['bench_cpu_s']:.1f} s, "
            f"other {c['other_cpu_s']:.1f} s; machine {c['machine_busy_pct']:.0f}% busy"
        )
        for problem in ver["problems"]:
            print(f"    {problem}")
    if prof:
        print()
        print(
            f"ingest_messages() in-process, no Celery: {prof['rows']:,} rows in {prof['seconds']:.2f} s = "
            f"{fmt(prof['per_s'])} ({prof['ms_per_batch']:.1f} ms per batch of {BATCH})"
        )
        print("cProfile of one ingest_messages() batch (cumulative):")
        print("\n".join(prof["cprofile_last_batch"].strip().splitlines()[:45]))
    print()
    print(
        f"SUMMARY (median of {len(runs)}): ingest {fmt(summary['steady_per_s'])} steady, "
        f"{fmt(summary['from_ready_per_s'])} from ready, {fmt(summary['wall_per_s'])} wall; "
        f"raw COPY {fmt(summary['copy_scratch_per_s'])} (scratch), {fmt(summary['copy_real_per_s'])} (real table); "
        f"ratio {summary['ratio_to_copy']} (to the scratch-table COPY: {summary['ratio_to_scratch_copy']}); "
        f"publishing {fmt(summary['publish_per_s'])}"
    )
    for g in summary["goals"]:
        value = g["value"]
        if value is None:
            shown = "-"
        elif g.get("unit") == "ms":
            shown = f"{value:.3f} ms"
        else:
            shown = f"{value:,.0f}/s" if value > 10 else f"{value:.3f}x"
        print(f"  {'PASS' if g['pass'] else 'MISS'}  {g['goal']}: {shown}")
    print(f"  {'ok  ' if summary['verified'] else 'FAIL'}  stored rows verified")


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _ms_per(cpu_s: float | None, n: int) -> str:
    return "-" if cpu_s is None else f"{cpu_s:.1f} s, {1000 * cpu_s / n:.3f} ms per measurement"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


# --- main --------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=50_000, help="measurements per run (default 50000)")
    parser.add_argument(
        "--per-message",
        type=int,
        default=PER_MESSAGE,
        help="measurements per ingest message, as region workers batch them (default 25)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs; medians are reported (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary on stdout instead of tables")
    parser.add_argument("--profile", action="store_true", help="also time store() in-process and cProfile one batch")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a run may take to store all rows")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the payloads")
    parser.add_argument("--db-name", default=BENCH_DB, help=f"the bench's own database (default {BENCH_DB})")
    parser.add_argument(
        "--redis-db",
        type=int,
        default=BENCH_REDIS_DB,
        help=f"the bench's own Redis database, flushed (default {BENCH_REDIS_DB})",
    )
    parser.add_argument("--drop-db", action="store_true", help="drop the bench database at the end")
    args = parser.parse_args()
    globals()["PER_MESSAGE"] = max(1, args.per_message)
    if args.count < BATCH:
        parser.error(f"--count must be at least {BATCH}")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    machine = machine_context()
    try:
        env = bench_env(args.db_name, args.redis_db)
        log(f"ingest bench: database {env['DATABASE_URL']}, Redis {env['REDIS_URL']}")
        t0 = time.perf_counter()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput", "-v", "0", timeout=300)
        log(f"  database ready in {time.perf_counter() - t0:.1f} s")
    except (BenchError, OSError, subprocess.TimeoutExpired) as exc:
        log(f"ingest bench: {exc}")
        return 1

    os.environ.update(env)
    import django

    django.setup()
    import redis as redis_lib
    from django.db import connection as dj

    from probes.models import Region

    redis_client = redis_lib.Redis.from_url(env["REDIS_URL"])
    conn = None
    runs: list[dict] = []
    prof = None
    try:
        conn = pg_connect()
        redis_client.flushdb()
        pairs, region_ids = seed_rows()
        slugs = dict(Region.objects.values_list("id", "slug"))
        credentials = region_credentials()
        dj.close()
        for i in range(args.repeats):
            log(f"run {i + 1}/{args.repeats}:")
            t = time.perf_counter()
            payloads = make_payloads(args.count, pairs, region_ids, args.seed + i, slugs)
            dj.close()
            log(
                f"  built {len(payloads):,} payloads in {time.perf_counter() - t:.1f} s "
                f"({sum(p['result']['outcome'] != 'ok' for p in payloads):,} failures)"
            )
            t = time.perf_counter()
            sealed = seal_messages(payloads, credentials, args.seed + i)
            log(f"  sealed them in {len(sealed):,} messages in {time.perf_counter() - t:.2f} s")
            ingest = run_ingest(env, conn, redis_client, payloads, sealed, args.timeout)
            log(f"  ingest: steady {fmt(ingest['steady_per_s'])}, wall {fmt(ingest['wall_per_s'])}")
            checked = verify(conn, payloads, args.seed + i)
            t = time.perf_counter()
            data, n = build_csv(payloads)
            log(
                f"  verified ({'ok' if checked['ok'] else 'FAILED'}); CSV of {n:,} rows, {len(data) / 1e6:.1f} MB "
                f"built in {time.perf_counter() - t:.1f} s"
            )
            copied = run_copy(conn, data, n)
            log(f"  COPY: scratch {fmt(copied['scratch_per_s'])}, real table {fmt(copied['real_per_s'])}")
            runs.append({"ingest": ingest, "copy": copied, "verify": checked})
            if args.profile and i == args.repeats - 1:
                prof = profile_store(conn, sealed)
                log(f"  ingest_messages() in-process: {fmt(prof['per_s'])}")
    except BenchError as exc:
        log(f"ingest bench: {exc}")
        return 1
    except KeyboardInterrupt:
        log("ingest bench: interrupted")
        return 130
    finally:
        # Leave nothing behind: no measurements, no scratch table, an empty Redis database.
        try:
            if conn is not None:
                conn.execute(f"DROP TABLE IF EXISTS {SCRATCH_TABLE}")
                truncate_measurements(conn)
                conn.close()
            dj.close()
            redis_client.flushdb()
            redis_client.close()
            if args.drop_db:
                drop_database(args.db_name)
        except Exception as exc:
            log(f"ingest bench: clean-up failed: {exc}")

    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    summary = summarize(runs)
    if args.json:
        print(
            json.dumps(
                {
                    "count": args.count,
                    "repeats": args.repeats,
                    "machine": machine,
                    "database": env["DATABASE_URL"],
                    "redis": env["REDIS_URL"],
                    "runs": runs,
                    "profile": prof,
                    **summary,
                },
                indent=2,
                default=str,
            )
        )
    else:
        report(args, machine, env, runs, summary, prof)
    return 0 if summary["verified"] else 1


def drop_database(name: str) -> None:
    import psycopg
    from django.conf import settings
    from psycopg import sql

    db = settings.DATABASES["default"]
    params = {
        "dbname": "postgres",
        "user": db["USER"] or None,
        "password": db["PASSWORD"] or None,
        "host": db["HOST"] or None,
        "port": db["PORT"] or None,
    }
    with psycopg.connect(**{k: v for k, v in params.items() if v is not None}, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    log(f"ingest bench: dropped database {name!r}")


if __name__ == "__main__":
    sys.exit(main())
