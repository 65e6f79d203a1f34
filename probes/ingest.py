"""Central ingest: validate measurements from region workers and store them
in batches, insert-or-ignore on the slot key, then announce the new ones.

Region workers are remote and may run another version: every payload is
checked, and a bad one is dropped with a log line instead of poisoning its
batch.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from datetime import UTC, datetime
from functools import partial

import psycopg
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections, connection, transaction

from probes import live
from probes.engine.result import CONNECTIONS, OUTCOMES
from probes.rollups import lock_hours

log = logging.getLogger(__name__)

FLOAT_FIELDS = (
    "retry_after_s",
    "dns_ms",
    "connect_ms",
    "tls_ms",
    "ttfb_ms",
    "first_event_ms",
    "ttft_ms",
    "ttfat_ms",
    "total_ms",
    "tokens_per_s",
    "itl_p50_ms",
    "itl_p95_ms",
    "itl_max_ms",
)
INT_FIELDS = ("http_status", "output_tokens", "response_bytes")
# Exclusive upper bounds of the integer columns: http_status is a smallint, so
# a larger value would fail the whole batch's INSERT, not just its own row.
INT_LIMITS = {"http_status": 2**15, "output_tokens": 2**31, "response_bytes": 2**31}
TEXT_FIELDS = {"error": 2000, "error_type": 120, "http_version": 16, "remote_addr": 64}

# Column order of the multi-row INSERT; the same names as the engine's result.
COLUMNS = (
    "probe_id",
    "target_id",
    "region_id",
    "scheduled_for",
    "started_at",
    "worker",
    "ingested_at",
    "outcome",
    "connection",
    "tokens_estimated",
    *FLOAT_FIELDS,
    *INT_FIELDS,
    *TEXT_FIELDS,
)

# Fields pushed to browsers: enough for maps, histograms and tables.
LIVE_FIELDS = ("outcome", "connection", "dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "ttft_ms", "ttfat_ms", "total_ms", "tokens_per_s", "output_tokens", "http_status")


class BadPayload(ValueError):
    pass


def _float(name: str, value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadPayload(f"{name} is not a number")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise BadPayload(f"{name} is not a finite non-negative number")
    return value


def _int(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not (0 <= value < INT_LIMITS[name]):
        raise BadPayload(f"{name} is not a non-negative integer")
    return value


def _text(value, limit: int) -> str:
    # PostgreSQL text cannot hold NUL, and psycopg cannot encode an unpaired
    # surrogate: either would fail the whole batch's INSERT.
    text = str(value).replace("\x00", "")
    return text.encode("utf-8", "replace").decode("utf-8")[:limit]


def _time(name: str, value) -> datetime:
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise BadPayload(f"{name} is not an ISO 8601 time") from None
    if when.tzinfo is None:
        raise BadPayload(f"{name} has no time zone")
    return when


def clean(payload: dict, now: datetime) -> dict:
    """One validated row (column -> value) from a worker's payload."""
    if not isinstance(payload, dict) or not isinstance(payload.get("result"), dict):
        raise BadPayload("payload is not a measurement message")
    res = payload["result"]
    row = {}
    for key in ("probe_id", "target_id", "region_id"):
        if not isinstance(payload.get(key), int) or isinstance(payload.get(key), bool):
            raise BadPayload(f"{key} is missing")
        row[key] = payload[key]
    row["scheduled_for"] = _time("scheduled_for", payload.get("scheduled_for"))
    row["started_at"] = _time("started_at", res.get("started_at"))
    row["worker"] = _text(payload.get("worker") or "", 255)
    row["ingested_at"] = now
    if res.get("outcome") not in OUTCOMES:
        raise BadPayload(f"unknown outcome {str(res.get('outcome'))[:40]!r}")
    row["outcome"] = res["outcome"]
    row["connection"] = res.get("connection") if res.get("connection") in CONNECTIONS else "cold"
    estimated = res.get("tokens_estimated")
    row["tokens_estimated"] = estimated if isinstance(estimated, bool) else None
    for name in FLOAT_FIELDS:
        row[name] = _float(name, res.get(name))
    for name in INT_FIELDS:
        row[name] = _int(name, res.get(name))
    for name, limit in TEXT_FIELDS.items():
        value = res.get(name)
        row[name] = None if value is None else _text(value, limit)
    return row


def store(payloads: list[dict]) -> list[dict]:
    """Insert the valid payloads, ignoring slots already stored. Returns the
    newly stored rows as broadcast items (sent once the transaction commits)."""
    from probes.models import Probe, Region, Target

    now = datetime.now(UTC)
    rows = []
    for payload in payloads:
        try:
            rows.append(clean(payload, now))
        except BadPayload as exc:
            log.warning("ingest: dropping a bad measurement: %s", exc)
    if not rows:
        return []
    # Rows whose probe, target or region no longer exists are dropped, not
    # allowed to fail the whole batch on a foreign key.
    known_probes = set(Probe.objects.filter(id__in={r["probe_id"] for r in rows}).values_list("id", flat=True))
    known_targets = set(Target.objects.filter(id__in={r["target_id"] for r in rows}).values_list("id", flat=True))
    known_regions = set(Region.objects.filter(id__in={r["region_id"] for r in rows}).values_list("id", flat=True))
    kept = []
    for row in rows:
        if row["probe_id"] in known_probes and row["target_id"] in known_targets and row["region_id"] in known_regions:
            kept.append(row)
        else:
            log.warning("ingest: dropping a measurement of an unknown probe, target or region: %s", {k: row[k] for k in ("probe_id", "target_id", "region_id")})
    if not kept:
        return []
    # Two copies of one slot in a batch: keep the first (ON CONFLICT cannot
    # touch the same key twice in one statement).
    unique: dict[tuple, dict] = {}
    for row in kept:
        unique.setdefault((row["probe_id"], row["region_id"], row["scheduled_for"]), row)
    kept = list(unique.values())

    # Every hour written to is locked (shared) and loses its "rolled up" mark,
    # the current one included: a batch whose clock read 11:59:59 may commit
    # after a rebuild of hour 11 began.
    written_hours = {r["started_at"].astimezone(UTC).replace(minute=0, second=0, microsecond=0) for r in kept}
    with transaction.atomic():
        lock_hours(written_hours, shared=True)
        # COPY into a per-connection staging table, then one INSERT ... SELECT
        # with ON CONFLICT: COPY formats rows in C, where binding thousands of
        # parameters (or arrays of them) costs more than the insert itself.
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cur:
            cur.execute(_STAGE_SQL)
            with cur.copy(f"COPY {_STAGE} ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in kept:
                    copy.write_row([row[c] for c in COLUMNS])
            cur.execute(_insert_sql())
            inserted = cur.fetchall()
        by_key = {(r["probe_id"], r["region_id"], r["scheduled_for"]): r for r in kept}
        items = []
        hours = set()
        for mid, probe_id, region_id, scheduled_for in inserted:
            row = by_key.get((probe_id, region_id, scheduled_for))
            if row is None:
                continue
            hours.add(row["started_at"].astimezone(UTC).replace(minute=0, second=0, microsecond=0))
            items.append(_live_item(mid, row))
        _mark_hours_stale(hours)
        transaction.on_commit(partial(live.broadcast, items))
    return items


_STAGE = "ingest_stage"
# Temporary, so private to the connection; emptied at every commit.
_STAGE_SQL = (
    f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} ON COMMIT DELETE ROWS "
    f"AS SELECT {', '.join(COLUMNS)} FROM probes_measurement WITH NO DATA"
)


@functools.cache
def _insert_sql() -> str:
    from probes.models import Measurement

    cols = ", ".join(COLUMNS)
    return (
        f"INSERT INTO {Measurement._meta.db_table} ({cols}) SELECT {cols} FROM {_STAGE} "
        "ON CONFLICT (probe_id, region_id, scheduled_for) DO NOTHING "
        "RETURNING id, probe_id, region_id, scheduled_for"
    )


def _live_item(mid: int, row: dict) -> dict:
    item = {
        "id": mid,
        "probe_id": row["probe_id"],
        "target_id": row["target_id"],
        "region_id": row["region_id"],
        "started_at": row["started_at"].isoformat(),
    }
    for name in LIVE_FIELDS:
        item[name] = row[name]
    return item


def _mark_hours_stale(hours: set[datetime]) -> None:
    """A late row lands in an hour already rolled up: that rollup is now
    short, so forget it; the next maintenance run rebuilds the hour."""
    if not hours:
        return
    from probes.models import RollupHour

    RollupHour.objects.filter(hour__in=hours).delete()


def store_with_retry(payloads: list[dict], *, max_wait_s: float | None = None) -> int:
    """Store, waiting out a database outage: the messages stay unacknowledged
    in the broker meanwhile, so nothing is lost and nothing is written twice."""
    delay = 0.5
    waited = 0.0
    one_by_one = False
    while True:
        try:
            return _store_each(payloads) if one_by_one else len(store(payloads))
        except (OperationalError, InterfaceError) as exc:
            if max_wait_s is not None and waited >= max_wait_s:
                raise
            log.warning("ingest: database unavailable (%s); retrying in %.1f s", str(exc).strip()[:200], delay)
            close_old_connections()
            connection.close()
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 10.0)
        except DatabaseError:
            # Not an outage but a row the database refuses. The batch is
            # acknowledged whatever happens here, so store the payloads one by
            # one and drop only the one that cannot be stored.
            log.exception("ingest: a batch of %d failed; storing one by one", len(payloads))
            one_by_one = True


def _store_each(payloads: list[dict]) -> int:
    stored = 0
    for payload in payloads:
        try:
            stored += len(store([payload]))
        except (OperationalError, InterfaceError):
            raise
        except DatabaseError as exc:
            log.warning("ingest: dropping a measurement the database refused: %s", str(exc).strip()[:200])
    return stored
