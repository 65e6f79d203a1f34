"""Raw measurements become a table partitioned by UTC day of scheduled_for (probes.partitions), by copy and swap
(probes.partition_swap: progress printed day by day, one transaction).

A day's rows are found through the BRIN index on started_at, which the slot rule keeps within an hour of
scheduled_for: one day's blocks are read, not the whole table per day. Rows that break the slot rule
(probes.slot_time: an old worker's broken clock) could not be stored under the new CHECK; they become dead letters
with the row as JSON and the reason.
"""

from django.db import migrations, models
from django.db.models import F, Q

from probes.partition_swap import constrain, copy_by_day, create_partitioned, rename_aside, say, unpartition
from probes.partitions import MEASUREMENTS
from probes.slot_time import SLOT_EARLY, SLOT_LATE

SOURCE = "migration 0017 (partitions)"

STARTED_NEAR_SLOT = models.CheckConstraint(
    condition=Q(started_at__gte=F("scheduled_for") - SLOT_EARLY, started_at__lte=F("scheduled_for") + SLOT_LATE),
    name="measurement_started_near_slot",
)
_RULE = (
    f"m.started_at >= m.scheduled_for - interval '{int(SLOT_EARLY.total_seconds())} seconds' "
    f"AND m.started_at <= m.scheduled_for + interval '{int(SLOT_LATE.total_seconds())} seconds'"
)


def _keep_slot_breakers(cur) -> int:
    cur.execute(
        "INSERT INTO probes_deadletter (received_at, source, reason, payload, payload_text, worker, probe_id, "
        "target_id, region_id) "
        "SELECT now(), %s, format('started_at %%s is not within "
        f"{SLOT_EARLY} before to {SLOT_LATE} after its slot %%s (a worker''s "
        "clock?): raw measurement %%s could not be kept when measurements were partitioned by slot', "
        "m.started_at, m.scheduled_for, m.id), to_jsonb(m), '', m.worker, m.probe_id, m.target_id, m.region_id "
        f"FROM probes_measurement_old m WHERE NOT ({_RULE})",
        [SOURCE],
    )
    return cur.rowcount


def partition(apps, schema_editor):
    Measurement = apps.get_model("probes", "Measurement")
    with schema_editor.connection.cursor() as cur:
        rename_aside(cur, MEASUREMENTS)
        create_partitioned(cur, MEASUREMENTS)
        copied = copy_by_day(
            cur,
            MEASUREMENTS,
            read_from=SLOT_EARLY,
            read_to=SLOT_LATE,
            # The started_at range lets the BRIN index on started_at find the day's blocks.
            rule=f"m.started_at >= %s AND m.started_at <= %s AND {_RULE}",
        )
        letters = _keep_slot_breakers(cur)
        if letters:
            say(f"  {letters} rows broke the slot rule (started_at too far from scheduled_for): kept as dead letters")
        constrain(cur, schema_editor, Measurement, MEASUREMENTS, [STARTED_NEAR_SLOT])
    say(f"  {MEASUREMENTS.table} partitioned: {copied} rows")


def unpartitioned(apps, schema_editor):
    Measurement = apps.get_model("probes", "Measurement")
    with schema_editor.connection.cursor() as cur:
        unpartition(cur, schema_editor, Measurement, MEASUREMENTS, [STARTED_NEAR_SLOT.name])


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0016_api_token"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(partition, unpartitioned, elidable=False)],
            state_operations=[migrations.AddConstraint(model_name="measurement", constraint=STARTED_NEAR_SLOT)],
        ),
    ]
