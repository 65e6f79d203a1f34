"""Central ingest: validate measurements from region workers and store them
in batches, insert-or-ignore on the slot key, then announce the new ones.

Region workers are remote and may run another version, or be forged: each
message is opened first (probes.fleet.trust: schema, region key, signature,
every payload of the signing key's region), then every payload is
checked on its own, against the configuration too (the probe's target, one
of the probe's regions). A bad one is kept whole as a dead letter with its
reason (probes.deadletters) in the same transaction as the rest of its
batch, which is stored: one payload can no longer cost its neighbours.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TypeVar

import psycopg
from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections, connection, transaction

from probes import deadletters, live, partitions
from probes.engine.result import CONNECTIONS, OUTCOMES
from probes.fleet.trust import Origin
from probes.metrics import BY_COLUMN, METRICS, OTHER_FIELDS, PROMETHEUS_HISTOGRAM
from probes.rollups import count_ingest
from probes.rollups.locks import hold_ingest_ids, hold_ingest_ids_sql
from probes.slos.counting import count_after_ingest
from probes.slot_time import SLOT_AHEAD_GRACE, SLOT_EARLY, SLOT_LATE, slot_is_ahead, started_near_slot

log = logging.getLogger(__name__)
T = TypeVar("T")

# Validated and stored as they are: every metric of the registry, and the
# other stored fields (probes.metrics; tests/readings/test_metric_registry.py checks
# that together they cover the engine's result).
FLOAT_FIELDS = tuple(
    [f.name for f in OTHER_FIELDS if f.kind == "float"] + [m.column for m in METRICS if m.kind == "float"]
)
INT_FIELDS = tuple([f.name for f in OTHER_FIELDS if f.kind == "int"] + [m.column for m in METRICS if m.kind == "int"])
# Exclusive upper bounds of the integer columns: http_status is a smallint, so
# a larger value would fail the whole batch's INSERT, not just its own row.
INT_LIMITS = {f.name: f.limit for f in OTHER_FIELDS if f.kind == "int"} | {
    m.column: 2**31 for m in METRICS if m.kind == "int"
}
TEXT_FIELDS = {f.name: f.limit for f in OTHER_FIELDS if f.kind == "text"}
# Columns with a plausibility ceiling (probes.metrics: Metric.ceiling). A
# value above it is no measurement, but the rest of the payload is one: the
# row is stored with NULL there, and store() logs how many were dropped.
CEILINGS = {m.column: m.ceiling for m in METRICS if m.ceiling is not None}

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

# Fields pushed to browsers: enough for maps, histograms and tables, so
# every metric the dashboard can draw (probes.metrics).
LIVE_FIELDS = (
    "outcome",
    "connection",
    *(m.column for m in METRICS if m.histogram or m.selectable),
    "output_tokens",
    "http_status",
)


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


# Times outside this range are a worker's broken clock, not a measurement:
# stored, they would sit in hours no rollup or retention ever reaches.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)
# Ids are bigint columns; a larger integer fails the whole batch's INSERT.
MAX_ID = 2**63


def _time(name: str, value, now: datetime) -> datetime:
    """The time in UTC. Converted here, per payload: an offset can carry a
    valid local time out of Python's range (0001-01-01T00:00+14:00), which
    used to raise later, in the middle of storing the whole batch."""
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise BadPayload(f"{name} is not an ISO 8601 time") from None
    if when.tzinfo is None:
        raise BadPayload(f"{name} has no time zone")
    try:
        when = when.astimezone(UTC)
    except (OverflowError, ValueError):
        raise BadPayload(f"{name} {str(value)[:40]!r} is out of range in UTC") from None
    if not EARLIEST <= when <= now + FUTURE_SLACK:
        raise BadPayload(f"{name} {str(value)[:40]!r} is not a plausible time (a worker's clock?)")
    return when


_INF = math.inf
# (name, ceiling or None) and (name, exclusive limit), in column order: one tuple walk per row.
_FLOAT_RULES = tuple((name, CEILINGS.get(name)) for name in FLOAT_FIELDS)
_INT_RULES = tuple((name, INT_LIMITS[name]) for name in INT_FIELDS)
_TEXT_RULES = tuple(TEXT_FIELDS.items())


def clean(payload: dict, now: datetime, implausible: list[str] | None = None) -> dict:
    """One validated row (column -> value) from a worker's payload. Values
    above their metric's ceiling become None, each noted in `implausible`."""
    if not isinstance(payload, dict) or not isinstance(payload.get("result"), dict):
        raise BadPayload("payload is not a measurement message")
    res = payload["result"]
    row = {}
    for key in ("probe_id", "target_id", "region_id"):
        value = payload.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadPayload(f"{key} is missing")
        if not 0 < value < MAX_ID:
            raise BadPayload(f"{key} {value} is out of range")
        row[key] = value
    row["scheduled_for"] = scheduled_for = _time("scheduled_for", payload.get("scheduled_for"), now)
    row["started_at"] = started_at = _time("started_at", res.get("started_at"), now)
    if not started_near_slot(started_at, scheduled_for):
        # The database would refuse it too (measurement_started_near_slot), with the rest of the batch.
        raise BadPayload(
            f"started_at {started_at.isoformat()} is not within {SLOT_EARLY} before to {SLOT_LATE} after "
            f"its slot {scheduled_for.isoformat()} (probes.slot_time: a worker's clock off, or a run "
            "started after its order expired)"
        )
    worker = payload.get("worker") or ""
    row["worker"] = worker[:255] if _plain_text(worker) else _text(worker, 255)
    row["ingested_at"] = now
    outcome = res.get("outcome")
    if outcome not in OUTCOMES:
        raise BadPayload(f"unknown outcome {str(outcome)[:40]!r}")
    row["outcome"] = outcome
    conn = res.get("connection")
    row["connection"] = conn if conn in CONNECTIONS else "cold"
    estimated = res.get("tokens_estimated")
    row["tokens_estimated"] = estimated if isinstance(estimated, bool) else None
    get = res.get
    # The checks of _float, _int and _text inlined for the common value; anything else goes through them, for
    # their refusal or their conversion.
    for name, ceiling in _FLOAT_RULES:
        value = get(name)
        if value is not None:
            if not (type(value) is float and 0 <= value < _INF):
                value = _float(name, value)
            if ceiling is not None and value is not None and value > ceiling:
                if implausible is not None:
                    implausible.append(f"{name}={value:g} {BY_COLUMN[name].unit} (over {ceiling:g})")
                value = None
        row[name] = value
    for name, limit in _INT_RULES:
        value = get(name)
        if value is not None and not (type(value) is int and 0 <= value < limit):
            value = _int(name, value)
        row[name] = value
    for name, limit in _TEXT_RULES:
        value = get(name)
        if value is not None:
            value = value[:limit] if _plain_text(value) else _text(value, limit)
        row[name] = value
    return row


def _plain_text(value: object) -> bool:
    # ASCII without NUL needs none of _text's repairs (no NUL, no surrogate).
    return type(value) is str and value.isascii() and "\x00" not in value


def store(
    payloads: list,
    *,
    rejected: list[tuple] | None = None,
    source: str = deadletters.INGEST_QUEUE,
    origins: list[Origin] | None = None,
) -> list[dict]:
    """Insert the valid payloads, ignoring slots already stored, and keep the
    invalid ones (and `rejected`: (value, reason) pairs or (value, reason,
    names) triples found earlier, see deadletters.letter) as dead letters in
    the same transaction. `origins`, one per payload, name the message and
    place each came from (probes.fleet.trust.Origin): a payload's letter is
    kept once however often its message is delivered. Returns the newly
    stored rows as broadcast items (sent once the transaction commits)."""
    now = datetime.now(UTC)
    letters = list(rejected or ())
    rows = []
    implausible: list[str] = []
    for k, payload in enumerate(payloads):
        came_from = origins[k] if origins is not None else None
        try:
            rows.append((clean(payload, now, implausible), payload, came_from))
        except BadPayload as exc:
            letters.append((payload, str(exc), _names(came_from)))
    if implausible:
        log.warning(
            "ingest: %d implausible values stored as NULL, e.g. %s", len(implausible), "; ".join(implausible[:3])
        )
    kept = _configured(rows, letters, now)
    # Two copies of one slot in a batch: keep the first (ON CONFLICT cannot
    # touch the same key twice in one statement).
    unique: dict[tuple, dict] = {}
    for row in kept:
        unique.setdefault((row["probe_id"], row["region_id"], row["scheduled_for"]), row)
    kept = list(unique.values())
    if not kept and not letters:
        return []

    if kept:
        # Before the batch's transaction and in one of its own: a late row's day gets its partition (steady
        # state: no query, the day is known), and a refused batch does not undo it.
        partitions.ensure_for_rows(partitions.MEASUREMENTS, (row["scheduled_for"] for row in kept), now)
    items = []
    with transaction.atomic():
        if kept:
            items = _insert(kept)
        if letters:
            deadletters.record_many(letters, source=source, received_at=now)
        if items:
            transaction.on_commit(partial(live.broadcast, items))
    if letters:
        # One line per batch however many were refused (a flood of forged
        # messages must not flood the log), the commonest reasons first.
        reasons = Counter(letter[1] for letter in letters)
        log.warning(
            "ingest: %d of %d messages and payloads kept as dead letters: %s",
            len(letters),
            len(payloads) + len(rejected or ()),
            "; ".join(f"{count} x {reason[:200]}" for reason, count in reasons.most_common(3))
            + ("; ..." if len(reasons) > 3 else ""),
        )
    return items


def _configured(rows: list[tuple[dict, object, Origin | None]], letters: list[tuple], now: datetime) -> list[dict]:
    """The rows whose probe exists, measures that target and runs from that
    region, for a slot that has come (probes.slot_time.slot_is_ahead); the
    others become dead letters (a foreign key failure would have cost the
    whole batch, a mismatch would file a row under the wrong name, a slot
    stored ahead of its time would have the real result for it ignored)."""
    from probes.models import Probe

    if not rows:
        return []
    probe_ids = sorted({row["probe_id"] for row, _, _ in rows})
    region_ids = sorted({row["region_id"] for row, _, _ in rows})
    # One query for the batch: each probe's target and interval, and which of the batch's regions it runs from.
    through = Probe.regions.through._meta
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT p.id, p.target_id, p.interval_seconds, "
            f"array_remove(array_agg(r.{through.get_field('region').column}), NULL) "
            f"FROM {Probe._meta.db_table} p LEFT JOIN {through.db_table} r "
            f"ON r.{through.get_field('probe').column} = p.id AND r.{through.get_field('region').column} = ANY(%s) "
            "WHERE p.id = ANY(%s) GROUP BY p.id",
            [region_ids, probe_ids],
        )
        found = cur.fetchall()
    targets = {pid: target for pid, target, _, _ in found}
    intervals = {pid: interval for pid, _, interval, _ in found}
    regions = {(pid, region) for pid, _, _, runs_from in found for region in runs_from}
    kept = []
    for row, payload, came_from in rows:
        probe_id, target_id, region_id = row["probe_id"], row["target_id"], row["region_id"]
        if probe_id not in targets:
            reason = f"probe {probe_id} does not exist"
        elif targets[probe_id] != target_id:
            reason = f"target {target_id} is not the target of probe {probe_id} ({targets[probe_id]})"
        elif (probe_id, region_id) not in regions:
            reason = f"region {region_id} is not one of the regions of probe {probe_id}"
        elif slot_is_ahead(row["scheduled_for"], now, intervals[probe_id]):
            reason = _ahead_reason(row["scheduled_for"], now, intervals[probe_id])
        else:
            kept.append(row)
            continue
        letters.append((payload, reason, _names(came_from)))
    return kept


def _names(came_from: Origin | None) -> dict:
    # The letter's key, worked out only for a payload that becomes one (probes.fleet.trust.MessageRef).
    return came_from.names() if came_from is not None else {}


def _ahead_reason(slot: datetime, now: datetime, interval: int) -> str:
    return (
        f"scheduled_for {slot.isoformat()} is ahead of its time: later than the ingest's clock "
        f"{now.isoformat(timespec='seconds')} plus the probe's interval ({interval} s) and {SLOT_AHEAD_GRACE} "
        "(probes.slot_time.SLOT_AHEAD_GRACE): no order for that slot has been sent yet"
    )


def _hour(when: datetime) -> datetime:
    return when.replace(minute=0, second=0, microsecond=0)  # already UTC (clean)


def _insert(kept: list[dict]) -> list[dict]:
    # COPY into a per-connection staging table, then one INSERT ... SELECT
    # with ON CONFLICT: COPY formats rows in C, where binding thousands of
    # parameters (or arrays of them) costs more than the insert itself. Binary,
    # so neither side formats or parses numbers and times as text.
    connection.ensure_connection()
    # Django's error wrapper, as around its own cursors: a refusal from this
    # raw cursor is then a django.db.DatabaseError like any other, and takes
    # the one-by-one path of store_with_retry instead of escaping it.
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cur:
        # The ingest ids' lock before the INSERT draws ids, so a cut (a rollup rebuild's, the objectives'
        # counter's) never falls among the ids of an uncommitted batch; sent with the staging table's
        # statement, in one round trip.
        cur.execute(f"{hold_ingest_ids_sql()}; {_STAGE_SQL}")
        with cur.copy(f"COPY {_STAGE} ({', '.join(COLUMNS)}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_copy_types())
            write = copy.write_row
            for row in kept:
                write([row[c] for c in COLUMNS])
        # Binary results: the stored rows' slots come back as timestamps, not text to parse.
        cur.execute(_insert_sql(), binary=True)
        inserted = cur.fetchall()
    by_key = {(r["probe_id"], r["region_id"], r["scheduled_for"]): r for r in kept}
    items = []
    hours = set()
    for mid, probe_id, region_id, scheduled_for in inserted:
        row = by_key.get((probe_id, region_id, scheduled_for))
        if row is None:
            continue
        hours.add(_hour(row["started_at"]))
        items.append(_live_item(mid, row))
    _mark_hours_stale(hours)
    return items


@functools.cache
def _copy_types() -> list[str]:
    """The staging columns' types for the binary COPY, read from the model's fields (a binary COPY must name
    them, and they follow the model's migrations): varchar(255) is sent as varchar, and so on."""
    from probes.models import Measurement

    by_column = {field.column: field for field in Measurement._meta.concrete_fields}
    missing = [column for column in COLUMNS if column not in by_column]
    if missing:
        raise LookupError(f"ingest's columns {missing} are not columns of {Measurement._meta.db_table}")
    return [by_column[column].db_type(connection).split("(")[0].strip() for column in COLUMNS]


_STAGE = "ingest_stage"
# Temporary, so private to the connection; emptied at every commit.
_STAGE_SQL = (
    f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} ON COMMIT DELETE ROWS "
    f"AS SELECT {', '.join(COLUMNS)} FROM probes_measurement WITH NO DATA"
)


@functools.cache
def _insert_sql(per_hour: bool = False) -> str:
    """The statement storing the staged rows. per_hour: answer (hour, rows stored) instead of a row per
    measurement, for bulk loads that broadcast nothing (store_copied). The objectives count the stored rows
    behind it (probes.slos.counting.count_pending)."""
    from probes.models import Measurement
    from probes.tally import tally_sql

    cols = ", ".join(COLUMNS)
    answer = (
        "SELECT date_trunc('hour', started_at), count(*) FROM stored GROUP BY 1"
        if per_hour
        else "SELECT id, probe_id, region_id, scheduled_for FROM stored"
    )
    # The tally's histogram column, named once.
    returned = dict.fromkeys(
        [
            *("id", "probe_id", "region_id", "scheduled_for", "started_at", "target_id", "outcome"),
            PROMETHEUS_HISTOGRAM.column,
        ]
    )
    # The tally (probes.tally: /metrics' counters) adds exactly the rows this INSERT stored, in the same statement
    # and transaction: a slot stored before (a redelivered message) is neither stored nor counted again.
    return (
        f"WITH stored AS (INSERT INTO {Measurement._meta.db_table} ({cols}) SELECT {cols} FROM {_STAGE} "
        "ON CONFLICT (probe_id, region_id, scheduled_for) DO NOTHING "
        f"RETURNING {', '.join(returned)}), "
        f"tallied AS ({tally_sql('stored')}) "
        f"{answer}"
    )


def store_copied(blocks: Iterable[bytes], slots: Iterable[datetime]) -> int:
    """Store rows already in COPY text format (tab-separated, \\N for NULL, the columns of COLUMNS in order) by
    ingest's own statement: the same staging table, insert-or-ignore, tally and stale-hour marks as store(), for a
    bulk load of rows that were never payloads and that nobody is watching live (the demo's history,
    devtools/demo_history.py). Nothing is validated or broadcast: the caller vouches for the rows. `slots` are
    the rows' scheduled_for (their days get partitions first). Returns the rows stored."""
    partitions.ensure_for_rows(partitions.MEASUREMENTS, slots, datetime.now(UTC))
    with transaction.atomic():
        connection.ensure_connection()
        hold_ingest_ids()
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cur:
            cur.execute(_STAGE_SQL)
            with cur.copy(f"COPY {_STAGE} ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for block in blocks:
                    copy.write(block)
            cur.execute(_insert_sql(per_hour=True))
            stored = dict(cur.fetchall())
        _mark_hours_stale(set(stored))
    return sum(stored.values())


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

    # Every hour written to, the current one included (a batch whose clock
    # read 11:59:59 may commit after a rebuild of hour 11 began): counted
    # first, then unmarked, the order the compare-and-swap with a rebuild
    # relies on (probes.rollups.locks).
    count_ingest(hours)
    RollupHour.objects.filter(hour__in=hours).delete()


def ingest_messages(messages: list[tuple]) -> int:
    """Store the measurements of a batch of ingest task messages, given as
    (args, kwargs, label) or (args, kwargs, label, task id). Region workers
    send one argument: a sealed results message (probes.fleet.trust opens
    it). What is refused, a whole message or one payload, is kept as a dead
    letter with the reason, once per message (its task id, or its digest
    without one) and payload, however often the message is delivered."""
    from probes.fleet.trust import open_results

    # The keys are looked up in the database: an outage is waited out here
    # too, the messages unacknowledged meanwhile, never dropped.
    opened = _waiting_out_outages(lambda: open_results(messages, datetime.now(UTC)))
    stored = store_with_retry(opened.payloads, rejected=opened.refused, origins=opened.origins)
    if stored:
        count_after_ingest()
    return stored


def _waiting_out_outages(read: Callable[[], T], *, max_wait_s: float | None = None) -> T:
    """read(), again and again while the database is unreachable."""
    delay = 0.5
    waited = 0.0
    while True:
        try:
            return read()
        except (OperationalError, InterfaceError) as exc:
            if max_wait_s is not None and waited >= max_wait_s:
                raise
            log.warning("ingest: database unavailable (%s); retrying in %.1f s", str(exc).strip()[:200], delay)
            close_old_connections()
            connection.close()
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 10.0)


def store_with_retry(
    payloads: list,
    *,
    rejected: list[tuple] | None = None,
    origins: list[Origin] | None = None,
    max_wait_s: float | None = None,
) -> int:
    """Store, waiting out a database outage: the messages stay unacknowledged
    in the broker meanwhile, so nothing is lost and nothing is written twice."""
    # After a refused batch: what is left to store one by one. Each payload
    # leaves the list once stored or kept as a dead letter, so an outage in
    # the middle resumes where it stopped instead of keeping letters twice.
    pending: list | None = None
    stored = 0

    def attempt() -> int:
        nonlocal pending, stored
        if pending is None:
            try:
                return len(store(payloads, rejected=rejected, origins=origins))
            except (OperationalError, InterfaceError):
                raise  # an outage: waited out by the caller
            except DatabaseError:
                # Not an outage but a row the database refuses. The batch is
                # acknowledged whatever happens here, so store the payloads one by
                # one: the one that cannot be stored becomes a dead letter.
                log.exception("ingest: a batch of %d failed; storing one by one", len(payloads))
                pending = [([], [item], []) for item in rejected or ()] + [
                    ([payload], [], None if origins is None else [origins[k]]) for k, payload in enumerate(payloads)
                ]
        while pending:
            stored += _store_one(pending[0])
            pending.pop(0)
        return stored

    return _waiting_out_outages(attempt, max_wait_s=max_wait_s)


def _store_one(entry: tuple[list, list, list[Origin] | None]) -> int:
    payloads, rejected, origins = entry
    try:
        return len(store(payloads, rejected=rejected, origins=origins))
    except (OperationalError, InterfaceError):
        raise
    except DatabaseError as exc:
        value, reason, *names = (payloads[0], "", _names(origins[0] if origins else None)) if payloads else rejected[0]
        reason = f"{reason}; " if reason else ""
        deadletters.record(
            value,
            reason=f"{reason}the database refused it: {str(exc).strip()[:500]}",
            source=deadletters.INGEST_QUEUE,
            received_at=datetime.now(UTC),
            names=names[0] if names else None,
        )
        return 0
