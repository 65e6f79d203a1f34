"""Series rollups (probes.rollups.series_blocks): each probe's daily rollups
from one region, for one target, merged over 2, 4, 8 and 16-day blocks, for
long reads per probe or target.

The backfill builds the blocks of every daily rollup already stored, one
statement per grain (2 days from the daily rows, each coarser grain from the
one before), and marks each block whose hours are all marked, so readers use
them from the first moment, as a rebuild would have left them.
"""

import itertools
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
GRAINS = (48, 96, 192, 384)
KEYS = "probe_id, region_id, target_id"
EPOCH = "timestamptz '1970-01-01 00:00:00+00'"


def _merge_sql(source: str, time_column: str, only: str) -> str:
    pairs = ", ".join(f"('{c}', s.{c})" for c in JSON_COLUMNS)
    pivots = ", ".join(f"(array_agg(o.obj) FILTER (WHERE o.col = '{c}'))[1] AS {c}" for c in JSON_COLUMNS)
    merged = ", ".join(f"coalesce(j.{c}, '{{}}'::jsonb)" for c in JSON_COLUMNS)
    block = f"date_bin(make_interval(hours => %(span)s), s.{time_column}, {EPOCH})"
    return f"""
        INSERT INTO probes_seriesrollup
            ({KEYS}, span_hours, start, samples, errors, updated_at, {", ".join(JSON_COLUMNS)})
        SELECT t.probe_id, t.region_id, t.target_id, %(span)s, t.b, t.samples, t.errors, now(), {merged}
        FROM (
            SELECT s.probe_id, s.region_id, s.target_id, {block} AS b,
                   sum(s.samples) AS samples, sum(s.errors) AS errors
            FROM {source} s WHERE {only} GROUP BY 1, 2, 3, 4
        ) t
        LEFT JOIN (
            SELECT o.probe_id, o.region_id, o.target_id, o.b, {pivots}
            FROM (
                SELECT e.probe_id, e.region_id, e.target_id, e.b, e.col, jsonb_object_agg(e.key, e.n) AS obj
                FROM (
                    SELECT s.probe_id, s.region_id, s.target_id, {block} AS b, m.col, x.key,
                           sum(x.value::bigint) AS n
                    FROM {source} s
                    CROSS JOIN LATERAL (VALUES {pairs}) AS m(col, hist)
                    CROSS JOIN LATERAL jsonb_each_text(m.hist) x
                    WHERE {only}
                    GROUP BY 1, 2, 3, 4, 5, 6
                ) e
                GROUP BY 1, 2, 3, 4, 5
            ) o
            GROUP BY 1, 2, 3, 4
        ) j ON j.probe_id = t.probe_id AND j.region_id = t.region_id AND j.target_id = t.target_id AND j.b = t.b
    """


# Every block of a grain whose hours all carry a mark (with rows or none, as a rebuild marks them).
MARKS_SQL = f"""
    INSERT INTO probes_seriesblockmark (span_hours, start, built_at)
    SELECT %(span)s, b, now()
    FROM (SELECT DISTINCT date_bin(make_interval(hours => %(span)s), hour, {EPOCH}) AS b FROM probes_rolluphour) d
    WHERE (SELECT count(*) FROM probes_rolluphour h
           WHERE h.hour >= d.b AND h.hour < d.b + make_interval(hours => %(span)s)) = %(span)s
"""


def backfill(apps, schema_editor):
    statements = [(GRAINS[0], _merge_sql("probes_dailyrollup", "day", "TRUE"))]
    for finer, grain in itertools.pairwise(GRAINS):
        statements.append((grain, _merge_sql("probes_seriesrollup", "start", f"s.span_hours = {finer}")))
    with schema_editor.connection.cursor() as cur:
        cur.execute("SET LOCAL jit = off")
        cur.execute("SET LOCAL enable_memoize = off")
        # Every daily rollup in one GROUP BY: in memory rather than spilled.
        cur.execute("SET LOCAL work_mem = '256MB'")
        for grain, sql in statements:
            began = time.monotonic()
            cur.execute(sql, {"span": grain})
            if cur.rowcount:
                print(
                    f"\n  series rollups: {cur.rowcount} blocks of {grain} h in {time.monotonic() - began:.1f} s",
                    end="",
                )
            cur.execute(MARKS_SQL, {"span": grain})


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0021_hourly_ranks"),
    ]

    operations = [
        migrations.CreateModel(
            name="SeriesBlockMark",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("span_hours", models.PositiveSmallIntegerField()),
                ("start", models.DateTimeField()),
                ("built_at", models.DateTimeField()),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("span_hours", "start"), name="series_block_mark_one_per_block")
                ],
            },
        ),
        migrations.CreateModel(
            name="SeriesRollup",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("samples", models.PositiveIntegerField(default=0)),
                ("errors", models.PositiveIntegerField(default=0, help_text="Samples whose outcome is not ok.")),
                ("outcomes", models.JSONField(blank=True, default=dict, help_text="Outcome name to count.")),
                ("ttft_hist", models.JSONField(blank=True, default=dict)),
                ("ttfat_hist", models.JSONField(blank=True, default=dict)),
                ("ttfb_hist", models.JSONField(blank=True, default=dict)),
                ("connect_hist", models.JSONField(blank=True, default=dict)),
                ("tls_hist", models.JSONField(blank=True, default=dict)),
                ("total_hist", models.JSONField(blank=True, default=dict)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("dns_hist", models.JSONField(blank=True, default=dict)),
                ("tokens_per_s_hist", models.JSONField(blank=True, db_default={}, default=dict)),
                ("span_hours", models.PositiveSmallIntegerField(help_text="Length of the block in hours.")),
                (
                    "start",
                    models.DateTimeField(help_text="Start of the block (a multiple of its span from 1970-01-01 UTC)."),
                ),
                (
                    "probe",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="series_rollups",
                        to="probes.probe",
                    ),
                ),
                (
                    "region",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="series_rollups",
                        to="probes.region",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="series_rollups",
                        to="probes.target",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("span_hours", "start", "target", "region", "probe"), name="series_rollup_one_per_block"
                    )
                ],
            },
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
