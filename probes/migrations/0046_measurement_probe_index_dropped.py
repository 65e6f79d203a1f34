"""The index on (probe, started_at) goes: no page reads a probe's measurements alone any more, and the one reader
left, a probe-filtered measurements.csv or API page, is served by the slot key (probe, region, scheduled_for),
whose leading column is the probe, with the BRIN on started_at. Every insert paid for it.

Going back builds it on every partition, each named as probes.partitions names a partition's indexes."""

from django.db import migrations, models

from probes import partitions


def name_partition_indexes(apps, schema_editor):
    with schema_editor.connection.cursor() as cur:
        for part in partitions.partitions(partitions.MEASUREMENTS):
            partitions.name_indexes(cur, partitions.MEASUREMENTS, part.name)


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0045_slo_exclude_rate_limited_and_alert_metric_rate_limited"),
    ]

    operations = [
        # Reversed last: the partitions' indexes renamed once the index is back on all of them.
        migrations.RunPython(migrations.RunPython.noop, name_partition_indexes, elidable=False),
        migrations.RemoveIndex(model_name="measurement", name="meas_probe_started"),
    ]
