"""bench/dashboard.py's upkeep measures: retention of one day, and ingest alone and while 30-day reads run.

Retention: probes.rollups.prune.prune_raw (the project's retention entry point), given a `now` that puts its cut
(now - LATENCY_RETENTION_DAYS) at the end of the oldest day plus SLOT_LATE: every row of that day's slots, and no
later day's partition. The bench data is one day shorter afterwards (later runs append as usual).

Ingest: N measurements (bench/workload.py's payloads for the bench's own probes) sealed per region as region workers
publish them (bench/ingest.py's helpers), then stored in process through probes.ingest.ingest_messages in batches of
about 500, as the ingest worker takes them off the queue (no broker: what is timed is open-and-store). Once alone,
once while a thread loops 30-day all-target reads over HTTP against uvicorn (the 5 endpoints in turn, then
regions.csv); the ingested rows are deleted and their hours rolled up again after each run.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from dashboard_common import bench_connect, log
from dashboard_reads import CSV_PARAMS, CSV_PATH, ENDPOINTS, http_session

from devtools.harness import BenchError, UvicornServer, manage

INGEST_WORKER_LIKE = "%@worker-_"  # bench/workload.py's worker names; the loaded rows' are region-*@bench


# --- retention --------------------------------------------------------------------------------------------------


def retain(now: datetime) -> int:
    """The one call into the retention entry point."""
    from probes.rollups.prune import prune_raw

    return prune_raw(now)


def retention_one_day() -> dict:
    from django.conf import settings

    from probes.slot_time import SLOT_LATE

    with bench_connect(autocommit=True) as conn:
        oldest = conn.execute("SELECT min(scheduled_for) FROM probes_measurement").fetchone()[0]
        if oldest is None:
            raise BenchError("no measurements to retain")
        before = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
    day_end = datetime(oldest.year, oldest.month, oldest.day, tzinfo=UTC) + timedelta(days=1)
    cut = day_end + SLOT_LATE
    now = cut + timedelta(days=settings.LATENCY_RETENTION_DAYS)
    log(f"dashboard bench: retention cutting at {cut:%Y-%m-%d %H:%M} UTC (the day {oldest:%Y-%m-%d})")
    t = time.perf_counter()
    reported = retain(now)
    seconds = time.perf_counter() - t
    with bench_connect(autocommit=True) as conn:
        after = conn.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]
        new_oldest = conn.execute("SELECT min(scheduled_for) FROM probes_measurement").fetchone()[0]
    return {
        "day": oldest.date().isoformat(),
        "cut": cut.isoformat(),
        "seconds": seconds,
        "rows_dropped": before - after,
        "reported": reported,
        "rows_per_s": (before - after) / seconds if seconds else None,
        "oldest_after": new_oldest.isoformat() if new_oldest else None,
    }


# --- ingest while reading ---------------------------------------------------------------------------------------


def ingest_batches(data: dict, count: int, seed: int) -> list[list[tuple]]:
    from ingest import BATCH, PER_MESSAGE, region_credentials, seal_messages
    from workload import make_payloads

    regions = data["regions"]
    pairs = [(p.id, p.target_id) for p in data["probes"]]
    payloads = make_payloads(count, pairs, [r.id for r in regions], seed, {r.id: r.slug for r in regions})
    sealed = seal_messages(payloads, region_credentials(), seed)
    per_batch = max(1, BATCH // PER_MESSAGE)
    return [[((m,), {}, "dashbench") for m in sealed[i : i + per_batch]] for i in range(0, len(sealed), per_batch)]


def delete_ingested(since: datetime) -> int:
    with bench_connect(autocommit=True) as conn:
        cur = conn.execute(
            "DELETE FROM probes_measurement WHERE ingested_at >= %s AND worker LIKE %s", [since, INGEST_WORKER_LIKE]
        )
        return cur.rowcount


def ingest_once(data: dict, count: int, seed: int) -> dict:
    from django.db import connection

    from probes.ingest import ingest_messages

    batches = ingest_batches(data, count, seed)
    connection.close()
    began = datetime.now(UTC)
    t = time.perf_counter()
    stored = 0
    for batch in batches:
        stored += ingest_messages(batch) or 0
    seconds = time.perf_counter() - t
    connection.close()
    removed = delete_ingested(began - timedelta(seconds=1))
    return {"count": count, "seconds": seconds, "per_s": count / seconds, "stored": stored, "removed": removed}


class Reader(threading.Thread):
    """Loops 30-day all-target reads until told to stop."""

    def __init__(self, origin: str) -> None:
        super().__init__(daemon=True)
        self.origin = origin
        self.stop_flag = threading.Event()
        self.ready = threading.Event()
        self.reads = 0
        self.ms: list[float] = []
        self.error: str | None = None

    def run(self) -> None:
        import httpx

        client = http_session(self.origin)
        paths = [(f"/api/{e}", {"target": "all", "window": "30d", "metric": "ttft"}) for e in ENDPOINTS]
        paths.append((CSV_PATH, CSV_PARAMS))
        try:
            self.ready.set()
            while not self.stop_flag.is_set():
                path, params = paths[self.reads % len(paths)]
                t = time.perf_counter()
                try:
                    response = client.get(path, params=params)
                except httpx.HTTPError as exc:
                    if not self.stop_flag.is_set():  # after it, the server stopping under a read is expected
                        self.error = f"{path}: {exc}"
                    return
                if response.status_code != 200:
                    self.error = f"{path}: HTTP {response.status_code}"
                    return
                self.ms.append((time.perf_counter() - t) * 1000)
                self.reads += 1
        finally:
            self.ready.set()
            client.close()


def ingest_under_reads(env: dict[str, str], data: dict, count: int) -> dict:
    alone = ingest_once(data, count, seed=101)
    log(f"  ingest alone: {alone['count']:,} in {alone['seconds']:.1f} s ({alone['per_s']:,.0f}/s)")
    log_path = f"{env.get('TMPDIR', '/tmp')}/dashbench-uvicorn-reads.log"
    with UvicornServer(env, log_path, access_log=False, collect_static=False) as server:
        reader = Reader(server.origin)
        reader.start()
        reader.ready.wait(60)
        try:
            loaded = ingest_once(data, count, seed=202)
        finally:
            reader.stop_flag.set()
    # A regions.csv read may still be running when the server stops: it ends with it.
    reader.join(30)
    if reader.error:
        raise BenchError(f"the 30-day reader failed: {reader.error}")
    log(
        f"  ingest with 30-day reads: {loaded['per_s']:,.0f}/s ({reader.reads} reads meanwhile);"
        f" ratio {loaded['per_s'] / alone['per_s']:.2f}"
    )
    manage(env, "rollup", "--since", "4h", timeout=600)  # the hours the deleted rows had touched
    return {
        "alone": alone,
        "with_reads": loaded,
        "ratio": loaded["per_s"] / alone["per_s"],
        "reads_meanwhile": reader.reads,
        "read_ms_median": sorted(reader.ms)[len(reader.ms) // 2] if reader.ms else None,
    }
