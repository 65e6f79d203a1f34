"""Converting a plain table to daily partitions (probes.partitions) by copy and swap, and back: the steps migrations
0017 (raw measurements) and 0018 (real users' observations) share.

The old table is renamed aside with its index names and id sequence, a partitioned table takes its name with the
same columns, defaults, NOT NULLs and CHECKs and an id sequence continuing where the old one stopped; a default
partition and one per day the old table holds (and today and the days ahead) are made and filled day by day with
INSERT ... SELECT, each day printed (rows, running total, rows/s); then the keys, foreign keys, constraints and
indexes are built on the filled table (faster than keeping them up to date row by row) and the old table dropped.
It all runs in the migration's one transaction: a failure leaves the old table as it was.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.db import models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.backends.utils import CursorWrapper

from probes import partitions
from probes.partitions import PartitionedTable

# Days made ahead at the conversion, as the scheduler would (LATENCY_PARTITIONS_AHEAD_DAYS' default).
AHEAD_DAYS = 7


def say(text: str) -> None:
    """Progress for the operator running `migrate`, as it happens."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def old_name(spec: PartitionedTable) -> str:
    return f"{spec.table}_old"


def rename_aside(cur: CursorWrapper, spec: PartitionedTable) -> None:
    """The old table, its indexes and its id sequence renamed out of the way (index and sequence names are unique
    per schema). The rename holds the table exclusively: readers and writers wait until the migration commits."""
    old = old_name(spec)
    cur.execute(f"LOCK TABLE {spec.table} IN EXCLUSIVE MODE")
    cur.execute(f"ALTER TABLE {spec.table} RENAME TO {old}")
    # Renaming a constraint's index renames the constraint too.
    cur.execute("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = %s", [old])
    for (name,) in cur.fetchall():
        cur.execute(f'ALTER INDEX "{name}" RENAME TO "{name[:55]}_old"')
    cur.execute("SELECT pg_get_serial_sequence(%s, 'id')", [old])
    (sequence,) = cur.fetchone()
    cur.execute(f"ALTER SEQUENCE {sequence} RENAME TO {old}_id_seq")


def create_partitioned(cur: CursorWrapper, spec: PartitionedTable) -> None:
    old = old_name(spec)
    cur.execute(f"SELECT last_value, is_called FROM {old}_id_seq")
    last_value, is_called = cur.fetchone()
    # No identity column: PostgreSQL before 17 does not allow one on a partitioned table. A sequence owned by
    # the column is the same to Django (it reads ids back with RETURNING) and to TRUNCATE ... RESTART IDENTITY.
    cur.execute(
        f"CREATE TABLE {spec.table} (LIKE {old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) "
        f"PARTITION BY RANGE ({spec.column})"
    )
    sequence = f"{spec.table}_id_seq"
    cur.execute(f"CREATE SEQUENCE {sequence} AS bigint OWNED BY {spec.table}.id")
    cur.execute("SELECT setval(%s, %s, %s)", [sequence, last_value, is_called])
    cur.execute(f"ALTER TABLE {spec.table} ALTER COLUMN id SET DEFAULT nextval('{sequence}')")
    cur.execute(f"CREATE TABLE {spec.default_name} PARTITION OF {spec.table} DEFAULT")


def columns(cur: CursorWrapper, table: str) -> str:
    cur.execute(
        "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        [table],
    )
    names: str = cur.fetchone()[0]
    return names


def copy_by_day(
    cur: CursorWrapper, spec: PartitionedTable, *, read_from: timedelta, read_to: timedelta, rule: str
) -> int:
    """Each day's rows of the old table into the day's partition, printing progress. Rows are found by the old
    table's index on a column within [day - read_from, day + 1 day + read_to) of the partition key (`rule` holds
    every copied row to it; the caller deals with the others). Returns the rows copied."""
    old = old_name(spec)
    cur.execute(f"SELECT DISTINCT ({spec.column} AT TIME ZONE 'UTC')::date FROM {old}")
    days = sorted(row[0] for row in cur.fetchall())
    today = datetime.now(UTC).date()
    partitions.ensure_days(spec, set(days) | {today + timedelta(days=n) for n in range(AHEAD_DAYS + 1)})
    names = columns(cur, spec.table)
    say(f"  partitioning {spec.table}: {len(days)} days to copy")
    total = 0
    started = time.monotonic()
    for day in days:
        low, high = partitions.day_bounds(day)
        cur.execute(
            f"INSERT INTO {spec.day_name(day)} ({names}) SELECT {names} FROM {old} m "
            f"WHERE m.{spec.column} >= %s AND m.{spec.column} < %s AND {rule}",
            [low, high, low - read_from, high + read_to],
        )
        total += cur.rowcount
        elapsed = max(time.monotonic() - started, 1e-6)
        say(f"  {day}: {cur.rowcount} rows, {total} in all, {total / elapsed:.0f} rows/s")
    return total


def constrain(
    cur: CursorWrapper,
    schema_editor: BaseDatabaseSchemaEditor,
    model: type[models.Model],
    spec: PartitionedTable,
    extra: Iterable[models.BaseConstraint] = (),
) -> None:
    """The old table's keys, foreign keys, the model's constraints and indexes, on the filled partitioned table;
    then the old table goes."""
    old = old_name(spec)
    # The partition key must be part of every unique key: Django keeps reading and writing `id` as its own.
    cur.execute(f"ALTER TABLE {spec.table} ADD CONSTRAINT {spec.table}_pkey PRIMARY KEY (id, {spec.column})")
    cur.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
        [old],
    )
    for name, definition in cur.fetchall():
        cur.execute(f'ALTER TABLE {spec.table} ADD CONSTRAINT "{name}" {definition}')
    for constraint in [*model._meta.constraints, *extra]:
        schema_editor.add_constraint(model, constraint)
    for index in model._meta.indexes:
        schema_editor.add_index(model, index)
    for part in partitions.partitions(spec):
        partitions.name_indexes(cur, spec, part.name)
    cur.execute(f"DROP TABLE {old}")
    cur.execute(f"ANALYZE {spec.table}")


def unpartition(
    cur: CursorWrapper,
    schema_editor: BaseDatabaseSchemaEditor,
    model: type[models.Model],
    spec: PartitionedTable,
    dropped: Iterable[str] = (),
) -> None:
    """Back to one plain table with an identity id, ids kept and continuing (a rollback of the conversion);
    `dropped`: CHECK constraints the older schema did not have."""
    flat = f"{spec.table}_flat"
    cur.execute(f"LOCK TABLE {spec.table} IN EXCLUSIVE MODE")
    cur.execute(f"CREATE TABLE {flat} (LIKE {spec.table} INCLUDING CONSTRAINTS)")
    for name in dropped:
        cur.execute(f"ALTER TABLE {flat} DROP CONSTRAINT IF EXISTS {name}")
    cur.execute(f"INSERT INTO {flat} SELECT * FROM {spec.table}")
    cur.execute(f"SELECT last_value, is_called FROM {spec.table}_id_seq")
    last_value, is_called = cur.fetchone()
    cur.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
        "AND contype = 'f' AND conparentid = 0",
        [spec.table],
    )
    foreign_keys = cur.fetchall()
    cur.execute(f"DROP TABLE {spec.table}")
    cur.execute(f"ALTER TABLE {flat} RENAME TO {spec.table}")
    cur.execute(f"ALTER TABLE {spec.table} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY")
    cur.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s, %s)", [spec.table, last_value, is_called])
    cur.execute(f"ALTER TABLE {spec.table} ADD CONSTRAINT {spec.table}_pkey PRIMARY KEY (id)")
    for name, definition in foreign_keys:
        cur.execute(f'ALTER TABLE {spec.table} ADD CONSTRAINT "{name}" {definition}')
    for constraint in model._meta.constraints:
        if constraint.name not in dropped:
            schema_editor.add_constraint(model, constraint)
    for index in model._meta.indexes:
        schema_editor.add_index(model, index)
    partitions.forget_known()
