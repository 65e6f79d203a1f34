"""Real users' observations become a table partitioned by UTC day of observed_at (probes.partitions), by copy and
swap (probes.partition_swap: progress printed day by day, one transaction). A day's rows are found through the
index on observed_at."""

from datetime import timedelta

from django.db import migrations

from probes.partition_swap import constrain, copy_by_day, create_partitioned, rename_aside, unpartition
from probes.partitions import OBSERVATIONS


def partition(apps, schema_editor):
    Observation = apps.get_model("probes", "Observation")
    with schema_editor.connection.cursor() as cur:
        rename_aside(cur, OBSERVATIONS)
        create_partitioned(cur, OBSERVATIONS)
        copy_by_day(cur, OBSERVATIONS, read_from=timedelta(0), read_to=timedelta(0), rule="m.observed_at >= %s AND m.observed_at < %s")
        constrain(cur, schema_editor, Observation, OBSERVATIONS)


def unpartitioned(apps, schema_editor):
    Observation = apps.get_model("probes", "Observation")
    with schema_editor.connection.cursor() as cur:
        unpartition(cur, schema_editor, Observation, OBSERVATIONS)


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0017_measurement_partitions"),
    ]

    operations = [
        migrations.RunPython(partition, unpartitioned, elidable=False),
    ]
