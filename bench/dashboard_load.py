"""bench/dashboard.py's data: 60 bench targets x 15 regions, loaded inside PostgreSQL a day at a time, rolled up,
and measured on disk.

Each target is one of six profiles (API style, median server time, spread, tokens/s, thinking, warm or cold
connections) placed at one of ten places, its median scaled per place, so that 60 targets look like 60 services;
one probe each, over every seeded region.
"""

from __future__ import annotations

import queue
import shutil
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from dashboard_common import META_TABLE, PASSWORD, USERNAME, admin_conninfo, bench_connect, log

from devtools.harness import BenchError, manage

FAIL_RATE = 0.02
TARGET_COUNT = 60
REGION_COUNT = 15
# Free space the load leaves untouched (of what the data directory's file system has free before it).
DISK_SPARE = 0.20
# Bytes on disk per million measurements (raw heap + its indexes + the rollups), measured by a 10 M-row run
# (bench/dashboard.py prints it) while daily rollups were kept too, so a little more than a load takes now: the
# estimate when the database holds no rows to measure yet.
DEFAULT_BYTES_PER_MILLION = 576 * 2**20

# api style, median server time (ms), log sigma, tokens/s, thinking (ms), connection
PROFILES = [
    ("openai", 330.0, 0.35, 85.0, 0.0, "cold"),
    ("anthropic", 450.0, 0.30, 70.0, 0.0, "warm"),
    ("gemini", 270.0, 0.30, 160.0, 0.0, "cold"),
    ("openai", 310.0, 0.30, 95.0, 0.0, "warm"),
    ("openai", 620.0, 0.45, 35.0, 900.0, "cold"),
    ("openai", 160.0, 0.25, 420.0, 0.0, "cold"),
]
# where, latitude, longitude, country, factor on the profile's median server time
PLACES = [
    ("Ashburn, Virginia", 39.0438, -77.4874, "US", 1.00),
    ("Columbus, Ohio", 39.9612, -82.9988, "US", 1.10),
    ("Council Bluffs, Iowa", 41.2619, -95.8608, "US", 0.90),
    ("Paris", 48.8566, 2.3522, "FR", 1.05),
    ("Hangzhou", 30.2741, 120.1551, "CN", 1.20),
    ("Dallas, Texas", 32.7767, -96.7970, "US", 0.85),
    ("Frankfurt", 50.1109, 8.6821, "DE", 0.95),
    ("Tokyo", 35.6762, 139.6503, "JP", 1.15),
    ("Singapore", 1.3521, 103.8198, "SG", 1.25),
    ("Sao Paulo", -23.5505, -46.6333, "BR", 1.30),
]


def targets() -> list[dict]:
    """The 60 bench targets: profile i % 6 at place i // 6."""
    out = []
    for i in range(TARGET_COUNT):
        style, proc, sigma, tps, think, connection = PROFILES[i % len(PROFILES)]
        where, lat, lon, country, factor = PLACES[i // len(PROFILES) % len(PLACES)]
        out.append(
            {
                "name": f"bench-{i:02d} {where.split(',')[0]}",
                "style": style,
                "lat": lat,
                "lon": lon,
                "where": where,
                "country": country,
                "proc": proc * factor,
                "sigma": sigma,
                "tps": tps,
                "think": think,
                "connection": connection,
            }
        )
    return out


def load_interrupted(name: str) -> bool:
    """The bench database has measurements but no record of a finished load."""
    import psycopg

    try:
        with psycopg.connect(**admin_conninfo(name), autocommit=True) as conn:
            has_rows = conn.execute("SELECT to_regclass('probes_measurement') IS NOT NULL").fetchone()[0]
            if has_rows:
                has_rows = conn.execute("SELECT EXISTS (SELECT 1 FROM probes_measurement)").fetchone()[0]
            has_meta = conn.execute(f"SELECT to_regclass('{META_TABLE}') IS NOT NULL").fetchone()[0]
            if has_meta:
                has_meta = conn.execute(f"SELECT EXISTS (SELECT 1 FROM {META_TABLE})").fetchone()[0]
            return bool(has_rows and not has_meta)
    except psycopg.OperationalError:
        return False  # no such database yet


def layout_changed(name: str) -> bool:
    """The bench database was loaded for another number of probe-region pairs (an older bench's 6 targets):
    its rows and targets would be mixed with this one's."""
    import psycopg

    try:
        with psycopg.connect(**admin_conninfo(name), autocommit=True) as conn:
            if not conn.execute(f"SELECT to_regclass('{META_TABLE}') IS NOT NULL").fetchone()[0]:
                return False
            row = conn.execute(f"SELECT pairs FROM {META_TABLE}").fetchone()
            return row is not None and row[0] != TARGET_COUNT * REGION_COUNT
    except psycopg.OperationalError:
        return False


def drop_database(name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(**admin_conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


# --- data ---------------------------------------------------------------------------------------------------


def seed_config() -> dict:
    """Bench targets, one probe each over every region, and the sign-in user (get-or-create)."""
    from django.contrib.auth import get_user_model

    from probes.models import Probe, Region, Target

    regions = list(Region.objects.order_by("id"))
    if len(regions) < REGION_COUNT:
        raise BenchError(f"expected the {REGION_COUNT} seeded regions, found {len(regions)}")
    regions = regions[:REGION_COUNT]
    probes = []
    for i, spec in enumerate(targets()):
        target, _ = Target.objects.get_or_create(
            name=spec["name"],
            defaults={
                "api_style": spec["style"],
                "url": f"https://bench-{i}.invalid/v1/chat/completions",
                "model": "bench-model",
                "api_key_env": "BENCH_API_KEY",
                "location_name": spec["where"],
                "latitude": spec["lat"],
                "longitude": spec["lon"],
            },
        )
        probe, created = Probe.objects.get_or_create(
            target=target,
            name="dashbench",
            defaults={"interval_seconds": 45, "timeout_seconds": 30.0, "connection": spec["connection"]},
        )
        if created:
            probe.regions.set(regions)
        probes.append(probe)
    User = get_user_model()
    if not User.objects.filter(username=USERNAME).exists():
        User.objects.create_superuser(USERNAME, "dashbench@example.invalid", PASSWORD)
    return {"regions": regions, "probes": probes}


def pair_rows(regions, probes) -> list[tuple]:
    """Per (probe, region): the parameters the SQL draws each run from."""
    from probes.geo import path_floor_ms

    rows = []
    for probe, spec in zip(probes, targets(), strict=True):
        for region in regions:
            floor = path_floor_ms(region.latitude, region.longitude, spec["lat"], spec["lon"])
            rtt = 1.5 * floor + 1.5  # cables detour; last mile
            if (region.country == "CN") != (spec["country"] == "CN"):
                rtt += 60.0  # the border costs more than the distance
            pair_sigma = spec["sigma"] + 0.05 * floor / 100.0
            dns_med = 6.0 + 0.05 * rtt
            rows.append(
                (
                    probe.id,
                    probe.target_id,
                    region.id,
                    f"region-{region.slug}@bench",
                    rtt,
                    spec["proc"],
                    pair_sigma,
                    spec["tps"],
                    spec["think"],
                    spec["connection"] == "cold",
                    dns_med,
                    region.longitude,
                    f"203.0.113.{probe.target_id % 250 + 1}",
                )
            )
    return rows


INSERT_SQL = """
INSERT INTO probes_measurement (
    probe_id, target_id, region_id, scheduled_for, started_at, worker, ingested_at, outcome, error, error_type,
    retry_after_s, http_status, http_version, remote_addr, connection, dns_ms, connect_ms, tls_ms, ttfb_ms,
    first_event_ms, ttft_ms, ttfat_ms, total_ms, output_tokens, tokens_estimated, tokens_per_s, itl_p50_ms,
    itl_p95_ms, itl_max_ms, response_bytes)
SELECT
    probe_id, target_id, region_id, slot, slot + jitter, worker,
    slot + jitter + make_interval(secs => (coalesce(total, 1000) + 300) / 1000.0),
    outcome,
    CASE outcome WHEN 'ok' THEN NULL
        WHEN 'http_error' THEN 'HTTP ' || status
        WHEN 'timeout' THEN 'no answer within the 30 s deadline'
        WHEN 'upstream_error' THEN 'stream error event: overloaded_error'
        WHEN 'connect_error' THEN 'connection refused'
        ELSE 'stream ended before its final event' END,
    CASE outcome WHEN 'ok' THEN NULL WHEN 'http_error' THEN 'HTTPStatusError' WHEN 'timeout' THEN 'Timeout'
        WHEN 'upstream_error' THEN 'UpstreamError' WHEN 'connect_error' THEN 'ConnectError'
        ELSE 'Truncated' END,
    CASE WHEN status = 429 THEN 2.0 END,
    CASE WHEN outcome = 'connect_error' THEN NULL ELSE status END,
    CASE WHEN outcome = 'connect_error' THEN NULL ELSE 'HTTP/2' END,
    remote_addr,
    CASE WHEN cold THEN 'cold' ELSE 'warm' END,
    dns, connect, tls, ttfb, ttfb + 0.4, ttft, ttfat, total,
    tokens, CASE WHEN tokens IS NOT NULL THEN false END, tps,
    1000.0 / tps, 2200.0 / tps, 6000.0 / tps,
    CASE WHEN tokens IS NOT NULL THEN tokens * 60 + 400 WHEN outcome = 'http_error' THEN 180 END
FROM (
    SELECT *,
        CASE WHEN outcome IN ('ok', 'truncated') THEN ttfat + (tokens - 1) * 1000.0 / tps
             WHEN outcome = 'timeout' THEN 30000.0
             WHEN outcome = 'connect_error' THEN coalesce(dns, 0) + 3000.0
             WHEN outcome = 'upstream_error' THEN ttfb + 40
             ELSE ttfb + 2 END AS total
    FROM (
        SELECT *,
            CASE WHEN outcome = 'connect_error' THEN NULL
                 WHEN outcome = 'http_error' THEN handshake + rtt + 25
                 WHEN outcome = 'timeout' AND u_tok < 0.5 THEN NULL
                 ELSE handshake + rtt + 0.7 * server END AS ttfb,
            CASE WHEN outcome IN ('ok', 'truncated') THEN handshake + rtt + server END AS ttft,
            CASE WHEN outcome IN ('ok', 'truncated') THEN handshake + rtt + server + think * exp(0.3 * z2) END AS ttfat,
            CASE WHEN outcome = 'ok' THEN 40 + floor(u_tok * 25)::int
                 WHEN outcome = 'truncated' THEN 3 + floor(u_tok * 10)::int END AS tokens,
            CASE WHEN outcome IN ('ok', 'truncated') THEN speed END AS tps,
            CASE WHEN outcome <> 'connect_error' THEN conn_ok END AS connect,
            CASE WHEN outcome <> 'connect_error' THEN tls_ok END AS tls
        FROM (
            SELECT *, coalesce(dns, 0) + coalesce(conn_ok, 0) + coalesce(tls_ok, 0) AS handshake
            FROM (
                SELECT r.*,
                    CASE WHEN u_fail >= %(fail)s THEN 'ok'
                         WHEN u_kind < 0.35 THEN 'http_error'
                         WHEN u_kind < 0.60 THEN 'timeout'
                         WHEN u_kind < 0.78 THEN 'upstream_error'
                         WHEN u_kind < 0.92 THEN 'connect_error'
                         ELSE 'truncated' END AS outcome,
                    CASE WHEN u_fail < %(fail)s AND u_kind < 0.35 THEN
                         (ARRAY[429, 500, 503])[1 + floor(u_tok * 3)::int] ELSE 200 END AS status,
                    CASE WHEN cold THEN dns_med * exp(0.5 * z2) END AS dns,
                    CASE WHEN cold THEN rtt * (1 + 0.15 * u_c1) + 0.3 END AS conn_ok,
                    CASE WHEN cold THEN rtt * (1 + 0.15 * u_c2) + 3.0 END AS tls_ok,
                    -- log-normal server time with a daily cycle peaking in the region's afternoon
                    proc * exp(sigma * z1) * (1 + 0.12 * sin(2 * pi() * (k * %(step)s::float8 / 86400.0 + lon / 360.0)))
                        AS server,
                    tps0 * exp(0.15 * z3) AS speed
                FROM (
                    -- random() is volatile: this level is never flattened, each draw is made once per row.
                    SELECT p.probe_id, p.target_id, p.region_id, p.worker, p.rtt, p.proc, p.sigma, p.tps AS tps0,
                           p.think, p.cold, p.dns_med, p.lon, p.remote_addr, g.k,
                           %(start)s::timestamptz + make_interval(secs => g.k * %(step)s::float8) AS slot,
                           make_interval(secs => random() * 0.4) AS jitter,
                           random() AS u_fail, random() AS u_kind, random() AS u_tok, random() AS u_c1,
                           random() AS u_c2,
                           sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS z1,
                           sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS z2,
                           sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS z3
                    -- Each slot, then its pairs in the temp table's order (probe, region): time order with no
                    -- sort. The reference to g.k and OFFSET 0 keep the slots the outer side of the loop.
                    FROM generate_series(%(k0)s::bigint, %(k1)s::bigint) AS g(k)
                    CROSS JOIN LATERAL (SELECT * FROM bench_pairs WHERE g.k >= 0 OFFSET 0) p
                ) r
                OFFSET 0
            ) a
            OFFSET 0
        ) b
        OFFSET 0
    ) c
    OFFSET 0
) d
"""


def partitioned(cur) -> bool:
    return cur.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'probes_measurement'::regclass)"
    ).fetchone()[0]


def ensure_day_partitions(days: list[date]) -> None:
    """The day partitions the load writes into, made ahead as the scheduler makes them (probes.partitions)."""
    from probes import partitions

    partitions.ensure_days(partitions.MEASUREMENTS, days)


def drop_secondary_indexes(cur) -> list[str]:
    """Drop every index and unique constraint of probes_measurement but the primary key (a bulk load then builds
    them once, instead of updating each B-tree per row); returns the statements that put them back as they were.
    On a partitioned table the parent's indexes are dropped and rebuilt with every partition's."""
    constraints = cur.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'probes_measurement'::regclass AND contype IN ('u', 'x')"
    ).fetchall()
    saved = []
    for name, definition in constraints:
        cur.execute(f'ALTER TABLE probes_measurement DROP CONSTRAINT "{name}"')
        saved.append(f'ALTER TABLE probes_measurement ADD CONSTRAINT "{name}" {definition}')
    indexes = cur.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE i.indrelid = 'probes_measurement'::regclass AND NOT i.indisprimary"
    ).fetchall()
    for name, definition in indexes:
        cur.execute(f'DROP INDEX "{name}"')
        # A partitioned table's index reads back as CREATE INDEX ... ON ONLY, which builds no partition's index
        # and leaves the parent's invalid: without ONLY it is built on every partition, as the migration made it.
        saved.append(definition.replace(" ON ONLY ", " ON ", 1))
    return saved


def restore_indexes(cur, saved: list[str]) -> None:
    cur.execute("SET maintenance_work_mem = '1GB'")
    cur.execute("SET max_parallel_maintenance_workers = 2")
    for statement in saved:
        t = time.perf_counter()
        cur.execute(statement)
        log(f"  {statement.split(' USING ')[0][:100]}: {time.perf_counter() - t:.0f} s")
    if partitioned(cur):
        from django.db import connection

        from probes import partitions

        cur.connection.commit()  # the indexes, before another connection renames them
        # The partitions' new indexes under the names ingest's partitions get (probes.partitions.name_indexes).
        with connection.cursor() as named:
            for partition in partitions.partitions(partitions.MEASUREMENTS):
                partitions.name_indexes(named, partitions.MEASUREMENTS, partition.name)


def open_loader(pairs: list[tuple]):
    """A connection set up for the bulk load, with the pairs in its own temp table."""
    conn = bench_connect()
    cur = conn.cursor()
    cur.execute("SET session_replication_role = replica")  # no FK triggers: the ids are ours, known good
    cur.execute("SET work_mem = '256MB'")
    cur.execute("SET jit = off")  # compiling these expressions costs seconds per statement
    cur.execute("SET synchronous_commit = off")  # a lost tail of a crashed load is loaded again (--reload)
    cur.execute(
        "CREATE TEMP TABLE bench_pairs (probe_id bigint, target_id bigint, region_id bigint, worker text,"
        " rtt float8, proc float8, sigma float8, tps float8, think float8, cold bool, dns_med float8,"
        " lon float8, remote_addr text)"
    )
    with cur.copy("COPY bench_pairs FROM STDIN") as copy:
        for row in pairs:
            copy.write_row(row)
    cur.execute("ANALYZE bench_pairs")
    conn.commit()
    return conn


def load(pairs: list[tuple], start: datetime, step: float, k0: int, k1: int, label: str, workers: int = 2) -> int:
    """Insert slots k0..k1 (inclusive) of every pair, a day of slots per statement, the days taken in time order
    by `workers` connections (the statement is CPU-bound in PostgreSQL: one backend per core)."""
    per_day = max(1, int(86400 / step))
    with bench_connect() as conn:
        if partitioned(conn.cursor()):
            first = (start + timedelta(seconds=k0 * step)).date()
            last = (start + timedelta(seconds=k1 * step + 1)).date()
            ensure_day_partitions([first + timedelta(days=d) for d in range((last - first).days + 1)])
    chunks = queue.SimpleQueue()
    for c0 in range(k0, k1 + 1, per_day):
        chunks.put((c0, min(k1, c0 + per_day - 1)))
    total = (k1 - k0 + 1) * len(pairs)
    lock = threading.Lock()
    progress = {"written": 0, "statements": 0}
    errors: list[Exception] = []
    t0 = time.perf_counter()

    def work() -> None:
        try:
            with open_loader(pairs) as conn:
                cur = conn.cursor()
                while not errors:
                    try:
                        c0, c1 = chunks.get_nowait()
                    except queue.Empty:
                        return
                    cur.execute(INSERT_SQL, {"start": start, "step": step, "k0": c0, "k1": c1, "fail": FAIL_RATE})
                    conn.commit()
                    with lock:
                        progress["written"] += cur.rowcount
                        progress["statements"] += 1
                        written, elapsed = progress["written"], time.perf_counter() - t0
                        if written == total or progress["statements"] % 10 == 0:
                            log(
                                f"  {label}: {written:,}/{total:,} rows, {elapsed:.0f} s"
                                f" ({written / max(elapsed, 1e-9):,.0f} rows/s)"
                            )
        except Exception as exc:  # re-raised in the caller's thread below
            errors.append(exc)

    threads = [threading.Thread(target=work, name=f"load-{i}") for i in range(max(1, workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return progress["written"]


# --- sizes on disk --------------------------------------------------------------------------------------------

SIZED = {
    "raw": "probes_measurement",
    "hourly": "probes_hourlyrollup",
    "region": "probes_regionrollup",
    "series": "probes_seriesrollup",
}


def relation_sizes(cur) -> dict[str, dict[str, int]]:
    """Bytes of each table's heap (pg_relation_size, summed over its partitions when partitioned), its indexes
    and the whole (TOAST included)."""
    out = {}
    for key, table in SIZED.items():
        if not cur.execute("SELECT to_regclass(%s) IS NOT NULL", [table]).fetchone()[0]:
            continue
        heap, indexes, total = cur.execute(
            "WITH parts AS (SELECT relid FROM pg_partition_tree(%(t)s::regclass) WHERE isleaf"
            "  UNION ALL SELECT %(t)s::regclass WHERE NOT EXISTS"
            "  (SELECT 1 FROM pg_partitioned_table WHERE partrelid = %(t)s::regclass))"
            " SELECT sum(pg_relation_size(relid)), sum(pg_indexes_size(relid)), sum(pg_total_relation_size(relid))"
            " FROM parts",
            {"t": table},
        ).fetchone()
        out[key] = {"heap": int(heap or 0), "indexes": int(indexes or 0), "total": int(total or 0)}
    return out


def exact_rows(cur) -> int:
    return cur.execute("SELECT count(*) FROM probes_measurement").fetchone()[0]


def per_million(sizes: dict[str, dict[str, int]], rows: int) -> dict[str, float]:
    """MiB per million raw measurements of each part."""
    if not rows:
        return {}
    scale = 1e6 / rows / 2**20
    out = {}
    for key, size in sizes.items():
        if key == "raw":
            out["raw_heap"] = size["heap"] * scale
            out["raw_indexes"] = size["indexes"] * scale
            out["raw_total"] = size["total"] * scale
        else:
            out[f"{key}_total"] = size["total"] * scale
    out["all"] = sum(s["total"] for s in sizes.values()) * scale
    return out


def data_directory_free(cur) -> tuple[int, str]:
    """Free bytes of the file system holding PostgreSQL's data directory (the nearest directory this user may
    look at: the data directory itself is the server's, mode 0700)."""
    path = Path(cur.execute("SHOW data_directory").fetchone()[0])
    for candidate in (path, *path.parents):
        try:
            return shutil.disk_usage(candidate).free, str(path)
        except OSError:
            continue
    raise BenchError(f"cannot see the file system of the data directory {path}")


def relation_total(cur) -> dict[str, int]:
    return {key: size["total"] for key, size in relation_sizes(cur).items()}


def check_disk(cur, rows_to_add: int, freed: int = 0) -> dict:
    """Refuse a load that would not fit, estimated from the per-million figures of the rows already there (or of
    the last measured run when there are none)."""
    have = exact_rows(cur)
    sizes = relation_sizes(cur)
    if have >= 100_000:
        per_m_bytes = per_million(sizes, have)["all"] * 2**20
        source = f"measured on the {have:,} rows present"
    else:
        per_m_bytes = DEFAULT_BYTES_PER_MILLION
        source = "a 10 M-row run's figure"
    need = per_m_bytes * rows_to_add / 1e6
    free, where = data_directory_free(cur)
    free += freed
    usable = free * (1 - DISK_SPARE)
    verdict = {"need_bytes": int(need), "free_bytes": free, "per_million_bytes": int(per_m_bytes), "source": source}
    log(
        f"dashboard bench: {rows_to_add:,} rows to load need about {need / 2**30:.1f} GiB ({per_m_bytes / 2**20:.0f}"
        f" MiB per million, {source}); {free / 2**30:.1f} GiB free under {where}"
    )
    if need > usable:
        fit = int(usable / per_m_bytes * 1e6)
        raise BenchError(
            f"{rows_to_add:,} rows would need about {need / 2**30:.1f} GiB but only {usable / 2**30:.1f} GiB may be"
            f" used ({free / 2**30:.1f} GiB free{' with the present data gone' if freed else ''}, {DISK_SPARE:.0%}"
            f" kept spare): at most about {fit:,} rows fit."
            " Run a smaller --rows and extrapolate from its per-million figures."
        )
    return verdict


# --- the whole preparation ------------------------------------------------------------------------------------


def prepare_data(args, env: dict[str, str], timings: dict) -> dict:
    cfg = seed_config()
    pairs = pair_rows(cfg["regions"], cfg["probes"])
    conn = bench_connect()
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (start timestamptz, step float8, loaded bigint, pairs int)")
    conn.commit()
    meta = cur.execute(f"SELECT start, step, loaded, pairs FROM {META_TABLE}").fetchone()
    now = datetime.now(UTC)
    if meta is not None and meta[3] == len(pairs):
        had = int((now - meta[0]).total_seconds() / meta[1]) * len(pairs)
        if abs(had - args.rows) > 0.1 * args.rows:
            log(f"dashboard bench: the data holds about {had:,} rows, --rows asks {args.rows:,}: loading again")
            # Measured on the rows there before they go; their space is the new load's.
            timings["disk_check"] = check_disk(cur, args.rows, freed=sum(relation_total(cur).values()))
            cur.execute(
                "TRUNCATE probes_measurement, probes_hourlyrollup, probes_rolluphour,"
                " probes_seriesrollup, probes_seriesblockmark CASCADE"
            )
            cur.execute(f"DELETE FROM {META_TABLE}")
            conn.commit()
            meta = None
    rolled_since = None
    loaded_rows = 0
    if meta is None or meta[3] != len(pairs):
        per_pair = args.rows // len(pairs)
        # From a midnight: the oldest day is a whole one, as retention drops it.
        start = datetime.combine((now - timedelta(days=args.days)).date(), datetime.min.time(), tzinfo=UTC)
        step = (now - start).total_seconds() / per_pair
        if "disk_check" not in timings:
            timings["disk_check"] = check_disk(cur, per_pair * len(pairs))
        conn.commit()
        log(
            f"dashboard bench: loading {per_pair * len(pairs):,} measurements ({len(pairs)} probe-region pairs, "
            f"one every {step:.1f} s, {args.days} days)"
        )
        saved = drop_secondary_indexes(cur)
        conn.commit()
        t = time.perf_counter()
        loaded_rows = load(pairs, start, step, 0, per_pair - 1, "load", getattr(args, "load_workers", 2))
        timings["load_s"] = time.perf_counter() - t
        timings["load_rows_per_s"] = loaded_rows / timings["load_s"]
        t = time.perf_counter()
        restore_indexes(cur, saved)
        conn.commit()
        timings["index_build_s"] = time.perf_counter() - t
        cur.execute(f"DELETE FROM {META_TABLE}")
        cur.execute(f"INSERT INTO {META_TABLE} VALUES (%s, %s, %s, %s)", [start, step, per_pair, len(pairs)])
        conn.commit()
        rolled_since = "61d"
    else:
        start, step, loaded, _ = meta
        due = int((now - start).total_seconds() // step) + 1
        if due > loaded:
            log(
                f"dashboard bench: reusing the data; appending {(due - loaded) * len(pairs):,} measurements"
                " due since the last run"
            )
            t = time.perf_counter()
            load(pairs, start, step, loaded, due - 1, "top-up", getattr(args, "load_workers", 2))
            timings["top_up_s"] = time.perf_counter() - t
            cur.execute(f"UPDATE {META_TABLE} SET loaded = %s", [due])
            conn.commit()
            first_new = start + timedelta(seconds=loaded * step)
            rolled_since = (first_new - timedelta(hours=1)).replace(minute=0, second=0, microsecond=0).isoformat()
        else:
            log("dashboard bench: reusing the data as it is")
    conn.commit()  # the reads above opened a transaction; autocommit cannot be switched inside one
    conn.autocommit = True
    if rolled_since == "61d":
        t = time.perf_counter()
        cur.execute("VACUUM ANALYZE probes_measurement")
        timings["vacuum_analyze_s"] = time.perf_counter() - t
    if args.rollup or (rolled_since != "61d" and not rollups_complete(cur, start)):
        rolled_since = "61d"
    if rolled_since:
        log(f"dashboard bench: manage.py rollup --since {rolled_since}")
        t = time.perf_counter()
        out = manage(env, "rollup", "--since", rolled_since, timeout=7200)
        timings["rollup_s"] = time.perf_counter() - t
        timings["rollup_since"] = rolled_since
        log(f"  {out} ({timings['rollup_s']:.0f} s)")
        # As autovacuum leaves them soon after: the rollups' visibility map set, so the reads' index-only scans
        # (rollup_hour_covering) skip the heap, and a --rollup rebuild's replaced rows reclaimed.
        for table in (
            "probes_hourlyrollup",
            "probes_regionrollup",
            "probes_seriesrollup",
            "probes_rolluphour",
        ):
            cur.execute(f"VACUUM ANALYZE {table}")
        cur.execute("ANALYZE")
    rows = exact_rows(cur)
    sizes = relation_sizes(cur)
    newest = cur.execute("SELECT max(started_at) FROM probes_measurement").fetchone()[0]
    is_partitioned = partitioned(cur)
    conn.close()
    return {
        "target": cfg["probes"][0].target,
        "probe": cfg["probes"][0],
        "probes": cfg["probes"],
        "regions": cfg["regions"],
        "rows": rows,
        "rows_estimate": rows,  # the name bench/alerts.py reads
        "table_size": f"{sizes['raw']['total'] / 2**20:,.0f} MB",
        "newest": newest,
        "sizes": sizes,
        "per_million_mib": per_million(sizes, rows),
        "partitioned": is_partitioned,
    }


def rollups_complete(cur, start: datetime) -> bool:
    """Every complete hour since the load began is marked rolled up, and series blocks exist (a database rolled up
    before they did has none)."""
    hours = int((datetime.now(UTC) - start).total_seconds() // 3600) - 1
    marked = cur.execute("SELECT count(*) FROM probes_rolluphour WHERE hour >= %s", [start]).fetchone()[0]
    if marked < hours - 1:
        log(f"dashboard bench: only {marked} of {hours} hours are rolled up: rebuilding")
        return False
    if not cur.execute("SELECT EXISTS (SELECT 1 FROM probes_seriesblockmark)").fetchone()[0]:
        log("dashboard bench: no series blocks yet: rebuilding")
        return False
    return True
