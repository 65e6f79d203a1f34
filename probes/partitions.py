"""Native daily range partitions of the largest tables: raw measurements by their slot (scheduled_for) and real
users' observations by observed_at, one partition per UTC day, plus a DEFAULT partition as the safety net.

Why days: retention then drops whole tables (no DELETE, no dead tuples, no vacuum debt), and a reader of a window
touches only the days it overlaps (probes.slot_time). Why a default partition: a writer that did not ensure its day
first (a test's bulk_create, an operator's hand SQL) still stores its rows; nothing is refused for want of a
partition. Creating that day's partition later moves its rows out of the default in the same transaction.

Partitions are named <table>_pYYYYMMDD and <table>_default. They are made ahead by the scheduler (probes.tasks
ensure_partitions, LATENCY_PARTITIONS_AHEAD_DAYS) and on demand by the writers (probes.ingest,
probes.realusers.store) for a late row; `manage.py partitions` lists them.

Plain SQL through django.db.connection: partitions are tables, not models.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import psycopg
from django.db import OperationalError, connection, transaction
from django.db.backends.utils import CursorWrapper

from probes.rollups.locks import LockSpace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionedTable:
    """A table partitioned by range of one timestamptz column, one partition per UTC day."""

    table: str
    column: str

    def day_name(self, day: date) -> str:
        return f"{self.table}_p{day:%Y%m%d}"

    @property
    def default_name(self) -> str:
        return f"{self.table}_default"


MEASUREMENTS = PartitionedTable("probes_measurement", "scheduled_for")
OBSERVATIONS = PartitionedTable("probes_observation", "observed_at")

# How long creating or dropping a partition waits for a table lock before giving up (retried later): every query
# of the table queues behind a waiting exclusive lock, so a long wait would stall the dashboard and ingest.
LOCK_WAIT = "5s"

_DAY_NAME = re.compile(r"_p(\d{8})$")

# The days each table is known to have a partition for, in this process: a writer's steady state (today's
# partition made ahead by the scheduler) then costs no query. Filled only once a creation has committed, so a
# rolled-back transaction cannot leave a day here that the database does not have.
_known: dict[str, set[date]] = {}


@dataclass(frozen=True)
class Partition:
    name: str
    day: date | None  # None for the default partition
    rows_estimate: int  # pg_class.reltuples: -1 when never analysed
    size_bytes: int  # table, indexes and TOAST


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """[low, high) of the day's partition: UTC midnight to the next."""
    low = datetime.combine(day, time(), tzinfo=UTC)
    return low, low + timedelta(days=1)


def days_of(times: Iterable[datetime]) -> set[date]:
    return {when.astimezone(UTC).date() for when in times}


def days_between(low: datetime, high: datetime) -> list[date]:
    """The UTC days a [low, high) range of the partition key overlaps."""
    first, last = low.astimezone(UTC).date(), (high.astimezone(UTC) - timedelta(microseconds=1)).date()
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def _literal(when: datetime) -> str:
    # DDL takes no parameters; the value is made here from a date, never from outside.
    return f"'{when.isoformat()}'::timestamptz"


def _lock(cur: CursorWrapper, spec: PartitionedTable) -> None:
    cur.execute(
        "SELECT pg_advisory_xact_lock(%s, %s)", [int(LockSpace.PARTITIONS), zlib.crc32(spec.table.encode()) - 2**31]
    )


def is_partitioned(spec: PartitionedTable) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(%s)", [spec.table])
        row = cur.fetchone()
    return bool(row and row[0])


def partitions(spec: PartitionedTable) -> list[Partition]:
    """The table's partitions, days first in order, the default last."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.relname, c.reltuples::bigint, pg_total_relation_size(c.oid) FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(%s)",
            [spec.table],
        )
        rows = cur.fetchall()
    found = []
    for name, estimate, size in rows:
        match = _DAY_NAME.search(name)
        day = datetime.strptime(match.group(1), "%Y%m%d").date() if match else None
        found.append(Partition(name, day, int(estimate), int(size)))
    return sorted(found, key=lambda p: (p.day is None, p.day or date.min, p.name))


def existing_days(spec: PartitionedTable) -> set[date]:
    return {p.day for p in partitions(spec) if p.day is not None}


def ensure_days(spec: PartitionedTable, days: Iterable[date]) -> list[date]:
    """Make sure each day has its partition, moving its rows out of the default partition if any are there.
    Idempotent, and safe when several processes ensure the same day at once (they take turns under an advisory
    lock, and each looks again once it holds it). Returns the days this call created."""
    wanted = set(days) - _known.get(spec.table, set())
    if not wanted:
        return []
    created = []
    with transaction.atomic(), connection.cursor() as cur:
        _lock(cur, spec)
        present = existing_days(spec)
        with _waiting_at_most(cur, LOCK_WAIT):
            for day in sorted(wanted - present):
                moved = _create_day(cur, spec, day)
                created.append(day)
                log.info("partitions: created %s (%d rows moved from the default)", spec.day_name(day), moved)
        transaction.on_commit(lambda: _known.setdefault(spec.table, set()).update(wanted))
    return created


@contextmanager
def _waiting_at_most(cur: CursorWrapper, timeout: str) -> Iterator[None]:
    """lock_timeout for the statements inside, then back to what it was (a migration's transaction goes on)."""
    cur.execute("SELECT current_setting('lock_timeout')")
    (before,) = cur.fetchone()
    cur.execute("SELECT set_config('lock_timeout', %s, true)", [timeout])
    yield
    # Not in a finally: after a failure the transaction is aborted, and its rollback restores the setting.
    cur.execute("SELECT set_config('lock_timeout', %s, true)", [before])


def lock_timed_out(exc: BaseException) -> bool:
    return isinstance(exc.__cause__, psycopg.errors.LockNotAvailable)


def _create_day(cur: CursorWrapper, spec: PartitionedTable, day: date) -> int:
    """Create the day's table, fill it with the day's rows from the default partition, attach it. Attaching (not
    CREATE ... PARTITION OF) holds the parent only in SHARE UPDATE EXCLUSIVE mode: reads and writes of other days
    go on. Returns how many rows moved."""
    low, high = day_bounds(day)
    name, default = spec.day_name(day), spec.default_name
    in_day = f"{spec.column} >= {_literal(low)} AND {spec.column} < {_literal(high)}"
    # Writers into the default wait until the attach: a row of this day committed there between the move and
    # the attach would fail it.
    cur.execute(f"LOCK TABLE {default} IN SHARE ROW EXCLUSIVE MODE")
    cur.execute(f"CREATE TABLE {name} (LIKE {spec.table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    cur.execute(
        f"WITH moved AS (DELETE FROM {default} WHERE {in_day} RETURNING *) INSERT INTO {name} SELECT * FROM moved"
    )
    moved: int = cur.rowcount
    bounds = f"FROM ({_literal(low)}) TO ({_literal(high)})"
    cur.execute(f"ALTER TABLE {spec.table} ATTACH PARTITION {name} FOR VALUES {bounds}")
    name_indexes(cur, spec, name)
    return moved


def name_indexes(cur: CursorWrapper, spec: PartitionedTable, partition: str) -> None:
    """Name the partition's indexes <partition>_<the parent index's name>, not PostgreSQL's made-up names: a
    unique violation and a plan name the partition's index, and then still say which key or index it is
    (measurement_one_per_slot, meas_target_failures)."""
    cur.execute(
        "SELECT child.relname, parent.relname FROM pg_index x JOIN pg_class child ON child.oid = x.indexrelid "
        "JOIN pg_inherits i ON i.inhrelid = x.indexrelid JOIN pg_class parent ON parent.oid = i.inhparent "
        "WHERE x.indrelid = %s::regclass",
        [partition],
    )
    for child, parent in cur.fetchall():
        wanted = f"{partition}_{parent}"[:63]
        if child != wanted:
            cur.execute(f'ALTER INDEX "{child}" RENAME TO "{wanted}"')


def ensure_for_rows(spec: PartitionedTable, times: Iterable[datetime], now: datetime | None = None) -> list[date]:
    """A writer's call before it inserts rows with these partition keys: their days get partitions, unless a day is
    already past retention or further ahead than the scheduler makes them (a sender's broken clock, a span from
    1970): such rows go to the default partition, and retention deletes them there, instead of each leaving a
    partition behind."""
    from django.conf import settings

    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    first = today - timedelta(days=settings.LATENCY_RETENTION_DAYS + 1)
    last = today + timedelta(days=settings.LATENCY_PARTITIONS_AHEAD_DAYS + 1)
    days = [day for day in days_of(times) if first <= day <= last]
    try:
        return ensure_days(spec, days)
    except OperationalError as exc:
        if not lock_timed_out(exc):
            raise
        # A long query holds the default partition: the writer does not wait behind it, its rows go to the
        # default (nothing is refused), and the next call (or the scheduler's) makes the day and moves them.
        log.warning("partitions: %s not made now (%s); rows go to the default partition", days, exc)
        return []


def ensure_ahead(spec: PartitionedTable, ahead_days: int, now: datetime | None = None) -> list[date]:
    """Today's partition and the next `ahead_days` days'. Returns the days created."""
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    return ensure_days(spec, [today + timedelta(days=n) for n in range(ahead_days + 1)])


def count_rows(spec: PartitionedTable, day: date) -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {spec.day_name(day)}")
        rows: int = cur.fetchone()[0]
    return rows


def drop_day(spec: PartitionedTable, day: date) -> int:
    """Detach the day's partition and drop it: no DELETE, so no dead tuples left behind. Returns the rows it held
    (0 when there was no such partition)."""
    with transaction.atomic(), connection.cursor() as cur:
        _lock(cur, spec)
        if day not in existing_days(spec):
            return 0
        name = spec.day_name(day)
        rows = count_rows(spec, day)
        # Deferred foreign key checks of rows this transaction wrote would block the DROP: run them now.
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # DETACH takes the whole table exclusively: waiting behind a long read (an export) would stall every
        # query queued behind it, so give up after LOCK_WAIT (LockNotAvailable) and let the next prune try.
        with _waiting_at_most(cur, LOCK_WAIT):
            cur.execute(f"ALTER TABLE {spec.table} DETACH PARTITION {name}")
        cur.execute(f"DROP TABLE {name}")
    _known.get(spec.table, set()).discard(day)
    return rows


def forget_known() -> None:
    """Forget which days this process saw (tests that drop partitions behind its back)."""
    _known.clear()


def partitioned_tables() -> list[PartitionedTable]:
    """The tables of this module that are partitioned in this database (an installation mid-upgrade may not have
    them all yet)."""
    return [spec for spec in (MEASUREMENTS, OBSERVATIONS) if is_partitioned(spec)]


def ensure_scheduled(now: datetime | None = None) -> int:
    """What the scheduler runs hourly: every partitioned table's today and LATENCY_PARTITIONS_AHEAD_DAYS ahead.
    Returns how many partitions were created."""
    from django.conf import settings

    created = 0
    for spec in partitioned_tables():
        days = ensure_ahead(spec, settings.LATENCY_PARTITIONS_AHEAD_DAYS, now)
        if days:
            log.info("partitions: made %s ahead for %s", ", ".join(map(str, days)), spec.table)
        created += len(days)
    return created
