"""Raw measurements become a table partitioned by UTC day of scheduled_for (probes.partitions), by copy and swap.

The old table is renamed aside (its index names with it), a partitioned table takes its name with the same columns,
defaults, NOT NULLs and CHECKs, its id sequence continuing where the old one stopped; a default partition and one
partition per day the old table holds (and today and the days ahead) are made, and filled day by day with INSERT ...
SELECT, each day printed (rows, running total, rows/s). The rows' own days are found through the BRIN index on
started_at, which the slot rule keeps within an hour of scheduled_for: one day is read, not the whole table per day.
Rows that break the slot rule (probes.slot_time: an old worker's broken clock) could not be stored under the new
CHECK; they become dead letters with the row as JSON and the reason. Then the keys, foreign keys, indexes and the
CHECK are built on the filled table (faster than keeping them up to date row by row) and the old table is dropped.

One transaction, like every migration here: a failure leaves the old table as it was. Writers wait meanwhile
(the old table is locked against writes from the start); readers read the old table until the swap.
"""

import sys
import time
from datetime import UTC, datetime, timedelta

from django.db import migrations, models
from django.db.models import F, Q

from probes.slot_time import SLOT_EARLY, SLOT_LATE

TABLE = "probes_measurement"
OLD = "probes_measurement_old"
SEQUENCE = "probes_measurement_id_seq"
# Days made ahead at the conversion, as the scheduler would (LATENCY_PARTITIONS_AHEAD_DAYS' default).
AHEAD_DAYS = 7
SOURCE = "migration 0017 (partitions)"

STARTED_NEAR_SLOT = models.CheckConstraint(
    condition=Q(started_at__gte=F("scheduled_for") - SLOT_EARLY, started_at__lte=F("scheduled_for") + SLOT_LATE),
    name="measurement_started_near_slot",
)
_RULE = (
    f"m.started_at >= m.scheduled_for - interval '{int(SLOT_EARLY.total_seconds())} seconds' "
    f"AND m.started_at <= m.scheduled_for + interval '{int(SLOT_LATE.total_seconds())} seconds'"
)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _rename_aside(cur) -> None:
    cur.execute(f"LOCK TABLE {TABLE} IN EXCLUSIVE MODE")
    cur.execute(f"ALTER TABLE {TABLE} RENAME TO {OLD}")
    # Index names are unique per schema: the new table's must be free. (Renaming a constraint's index renames
    # the constraint too.)
    cur.execute("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = %s", [OLD])
    for (name,) in cur.fetchall():
        cur.execute(f'ALTER INDEX "{name}" RENAME TO "{name[:55]}_old"')
    cur.execute("SELECT pg_get_serial_sequence(%s, 'id')", [OLD])
    (old_sequence,) = cur.fetchone()
    cur.execute(f"ALTER SEQUENCE {old_sequence} RENAME TO {OLD}_id_seq")


def _create_partitioned(cur) -> None:
    cur.execute(f"SELECT last_value, is_called FROM {OLD}_id_seq")
    last_value, is_called = cur.fetchone()
    # No identity column: PostgreSQL before 17 does not allow one on a partitioned table. A sequence owned by
    # the column is the same to Django (it reads ids back with RETURNING) and to TRUNCATE ... RESTART IDENTITY.
    cur.execute(
        f"CREATE TABLE {TABLE} (LIKE {OLD} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (scheduled_for)"
    )
    cur.execute(f"CREATE SEQUENCE {SEQUENCE} AS bigint OWNED BY {TABLE}.id")
    cur.execute("SELECT setval(%s, %s, %s)", [SEQUENCE, last_value, is_called])
    cur.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT nextval('{SEQUENCE}')")
    cur.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {TABLE} DEFAULT")


def _copy(cur) -> int:
    from probes.partitions import MEASUREMENTS, day_bounds, ensure_days

    cur.execute(f"SELECT DISTINCT (scheduled_for AT TIME ZONE 'UTC')::date FROM {OLD}")
    days = sorted(row[0] for row in cur.fetchall())
    today = datetime.now(UTC).date()
    ensure_days(MEASUREMENTS, set(days) | {today + timedelta(days=n) for n in range(AHEAD_DAYS + 1)})
    cur.execute("SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped", [TABLE])
    (columns,) = cur.fetchone()
    _say(f"  partitioning {TABLE}: {len(days)} days to copy")
    total = 0
    started = time.monotonic()
    for day in days:
        low, high = day_bounds(day)
        # The started_at range lets the BRIN index on started_at find the day's blocks; rows outside it break
        # the slot rule and are kept as dead letters below.
        cur.execute(
            f"INSERT INTO {MEASUREMENTS.day_name(day)} ({columns}) SELECT {columns} FROM {OLD} m "
            "WHERE m.scheduled_for >= %s AND m.scheduled_for < %s AND m.started_at >= %s AND m.started_at <= %s "
            f"AND {_RULE}",
            [low, high, low - SLOT_EARLY, high + SLOT_LATE],
        )
        total += cur.rowcount
        elapsed = max(time.monotonic() - started, 1e-6)
        _say(f"  {day}: {cur.rowcount} rows, {total} in all, {total / elapsed:.0f} rows/s")
    return total


def _keep_slot_breakers(cur) -> int:
    cur.execute(
        "INSERT INTO probes_deadletter (received_at, source, reason, payload, payload_text, worker, probe_id, "
        "target_id, region_id) "
        "SELECT now(), %s, format('started_at %%s is not within "
        f"{SLOT_EARLY} before to {SLOT_LATE} after its slot %%s (a worker''s "
        "clock?): raw measurement %%s could not be kept when measurements were partitioned by slot', "
        "m.started_at, m.scheduled_for, m.id), to_jsonb(m), '', m.worker, m.probe_id, m.target_id, m.region_id "
        f"FROM {OLD} m WHERE NOT ({_RULE})",
        [SOURCE],
    )
    return cur.rowcount


def _constrain(cur, schema_editor, Measurement) -> None:
    cur.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id, scheduled_for)")
    cur.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
        [OLD],
    )
    for name, definition in cur.fetchall():
        cur.execute(f'ALTER TABLE {TABLE} ADD CONSTRAINT "{name}" {definition}')
    for constraint in Measurement._meta.constraints:
        schema_editor.add_constraint(Measurement, constraint)
    schema_editor.add_constraint(Measurement, STARTED_NEAR_SLOT)
    for index in Measurement._meta.indexes:
        schema_editor.add_index(Measurement, index)


def partition(apps, schema_editor):
    Measurement = apps.get_model("probes", "Measurement")
    started = time.monotonic()
    with schema_editor.connection.cursor() as cur:
        _rename_aside(cur)
        _create_partitioned(cur)
        copied = _copy(cur)
        letters = _keep_slot_breakers(cur)
        if letters:
            _say(f"  {letters} rows broke the slot rule (started_at too far from scheduled_for): kept as dead letters")
        _constrain(cur, schema_editor, Measurement)
        cur.execute(f"DROP TABLE {OLD}")
        cur.execute(f"ANALYZE {TABLE}")
    _say(f"  {TABLE} partitioned: {copied} rows in {time.monotonic() - started:.1f} s")


def unpartition(apps, schema_editor):
    """Back to one plain table (the slot CHECK removed, ids kept and continuing), for a rollback to 0016."""
    from probes.partitions import forget_known

    Measurement = apps.get_model("probes", "Measurement")
    flat = "probes_measurement_flat"
    with schema_editor.connection.cursor() as cur:
        cur.execute(f"LOCK TABLE {TABLE} IN EXCLUSIVE MODE")
        cur.execute(f"CREATE TABLE {flat} (LIKE {TABLE} INCLUDING CONSTRAINTS)")
        cur.execute(f"ALTER TABLE {flat} DROP CONSTRAINT IF EXISTS {STARTED_NEAR_SLOT.name}")
        cur.execute(f"INSERT INTO {flat} SELECT * FROM {TABLE}")
        cur.execute(f"SELECT last_value, is_called FROM {SEQUENCE}")
        last_value, is_called = cur.fetchone()
        cur.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
            "AND contype = 'f' AND conparentid = 0",
            [TABLE],
        )
        foreign_keys = cur.fetchall()
        cur.execute(f"DROP TABLE {TABLE}")
        cur.execute(f"ALTER TABLE {flat} RENAME TO {TABLE}")
        cur.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY")
        cur.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s, %s)", [TABLE, last_value, is_called])
        cur.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id)")
        for name, definition in foreign_keys:
            cur.execute(f'ALTER TABLE {TABLE} ADD CONSTRAINT "{name}" {definition}')
    for constraint in Measurement._meta.constraints:
        if constraint.name != STARTED_NEAR_SLOT.name:
            schema_editor.add_constraint(Measurement, constraint)
    for index in Measurement._meta.indexes:
        schema_editor.add_index(Measurement, index)
    forget_known()


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0016_api_token"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(partition, unpartition, elidable=False)],
            state_operations=[migrations.AddConstraint(model_name="measurement", constraint=STARTED_NEAR_SLOT)],
        ),
    ]
