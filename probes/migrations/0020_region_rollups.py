"""Region rollups (probes.rollups.ladder): every probe's hourly rollups of a
region merged over 1 h, 3 h, 12 h, 1 d and 7 d blocks, for reads of all
targets.

The backfill builds the blocks of every hourly rollup already stored, one
statement per grain (1 h from the hourly rows, each coarser grain from the
one before), so readers can use them for every hour already marked from the
first moment. It reads every hourly rollup once: minutes at tens of
millions of raw rows, hence the progress lines.
"""

import time

import django.db.models.deletion
from django.db import migrations, models

# Frozen copies of this migration's schema: later metrics or grains must not
# leak into a backfill that runs against it.
JSON_COLUMNS = (
    "outcomes",
    "ttft_hist",
    "ttfat_hist",
    "ttfb_hist",
    "connect_hist",
    "tls_hist",
    "total_hist",
    "dns_hist",
    "tokens_per_s_hist",
)
GRAINS = (1, 3, 12, 24, 168)


def _merge_sql(source: str, time_column: str, seconds: str, only: str) -> str:
    pairs = ", ".join(f"('{c}', s.{c})" for c in JSON_COLUMNS)
    pivots = ", ".join(f"(array_agg(o.obj) FILTER (WHERE o.col = '{c}'))[1] AS {c}" for c in JSON_COLUMNS)
    merged = ", ".join(f"coalesce(j.{c}, '{{}}'::jsonb)" for c in JSON_COLUMNS)
    block = f"date_bin(make_interval(hours => %(span)s), s.{time_column}, timestamptz '1970-01-01 00:00:00+00')"
    return f"""
        INSERT INTO probes_regionrollup
            (region_id, span_hours, start, samples, errors, sample_seconds, updated_at, {", ".join(JSON_COLUMNS)})
        SELECT t.region_id, %(span)s, t.b, t.samples, t.errors, t.seconds, now(), {merged}
        FROM (
            SELECT s.region_id, {block} AS b, sum(s.samples) AS samples, sum(s.errors) AS errors,
                   sum({seconds}) AS seconds
            FROM {source} s WHERE {only} GROUP BY 1, 2
        ) t
        LEFT JOIN (
            SELECT o.region_id, o.b, {pivots}
            FROM (
                SELECT e.region_id, e.b, e.col, jsonb_object_agg(e.key, e.n) AS obj
                FROM (
                    SELECT s.region_id, {block} AS b, m.col, x.key, sum(x.value::bigint) AS n
                    FROM {source} s
                    CROSS JOIN LATERAL (VALUES {pairs}) AS m(col, hist)
                    CROSS JOIN LATERAL jsonb_each_text(m.hist) x
                    WHERE {only}
                    GROUP BY 1, 2, 3, 4
                ) e
                GROUP BY 1, 2, 3
            ) o
            GROUP BY 1, 2
        ) j ON j.region_id = t.region_id AND j.b = t.b
    """


def backfill(apps, schema_editor):
    statements = [
        (GRAINS[0], _merge_sql("probes_hourlyrollup", "hour", "s.samples * (extract(epoch FROM s.hour) + 1800)", "TRUE"))
    ]
    for finer, grain in zip(GRAINS, GRAINS[1:]):
        statements.append((grain, _merge_sql("probes_regionrollup", "start", "s.sample_seconds", f"s.span_hours = {finer}")))
    with schema_editor.connection.cursor() as cur:
        cur.execute("SET LOCAL jit = off")
        cur.execute("SET LOCAL enable_memoize = off")
        # Every hourly rollup in one GROUP BY: in memory rather than spilled.
        cur.execute("SET LOCAL work_mem = '256MB'")
        for grain, sql in statements:
            began = time.monotonic()
            cur.execute(sql, {"span": grain})
            if cur.rowcount:
                print(f"\n  region rollups: {cur.rowcount} blocks of {grain} h in {time.monotonic() - began:.1f} s", end="")



class Migration(migrations.Migration):

    dependencies = [
        ('probes', '0019_hour_version'),
    ]

    operations = [
        migrations.CreateModel(
            name='RegionRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('samples', models.PositiveIntegerField(default=0)),
                ('errors', models.PositiveIntegerField(default=0, help_text='Samples whose outcome is not ok.')),
                ('outcomes', models.JSONField(blank=True, default=dict, help_text='Outcome name to count.')),
                ('ttft_hist', models.JSONField(blank=True, default=dict)),
                ('ttfat_hist', models.JSONField(blank=True, default=dict)),
                ('ttfb_hist', models.JSONField(blank=True, default=dict)),
                ('connect_hist', models.JSONField(blank=True, default=dict)),
                ('tls_hist', models.JSONField(blank=True, default=dict)),
                ('total_hist', models.JSONField(blank=True, default=dict)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('dns_hist', models.JSONField(blank=True, default=dict)),
                ('tokens_per_s_hist', models.JSONField(blank=True, db_default={}, default=dict)),
                ('span_hours', models.PositiveSmallIntegerField(help_text='Length of the block in hours.')),
                ('start', models.DateTimeField(help_text='Start of the block (a multiple of its span from 1970-01-01 UTC).')),
                ('sample_seconds', models.FloatField(default=0)),
                ('region', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='region_rollups', to='probes.region')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('span_hours', 'start', 'region'), name='region_rollup_one_per_block')],
            },
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
