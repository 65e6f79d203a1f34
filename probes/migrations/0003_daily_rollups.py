"""DNS histograms in hourly rollups, and daily rollups merged from them.

Hours rolled up before this migration keep an empty dns_hist until rebuilt
(`manage.py rollup --since 30d` refreshes the raw-retention span); every
other column of theirs is already complete, so their daily rows are built
here from them, keeping the readers' rule "24 marked hours mean a complete
daily row" true from the first moment.
"""

import django.db.models.deletion
from django.db import migrations, models

# Frozen copy of the column set at this migration: later metrics must not
# leak into a backfill that runs against this schema.
JSON_COLUMNS = (
    "outcomes",
    "ttft_hist",
    "ttfat_hist",
    "ttfb_hist",
    "connect_hist",
    "tls_hist",
    "total_hist",
    "dns_hist",
)


def _merged(column: str) -> str:
    return (
        "(SELECT coalesce(jsonb_object_agg(s.key, s.n), '{}'::jsonb) FROM ("
        "SELECT e.key, sum(e.value::bigint) AS n FROM probes_hourlyrollup h "
        f"CROSS JOIN LATERAL jsonb_each_text(h.{column}) e "
        "WHERE h.probe_id = g.probe_id AND h.region_id = g.region_id "
        "AND h.hour >= g.day AND h.hour < g.day + interval '24 hours' GROUP BY e.key) s)"
    )


BACKFILL = f"""
INSERT INTO probes_dailyrollup
    (probe_id, target_id, region_id, day, samples, errors, tokens_per_s_sum, tokens_per_s_count, updated_at,
     {", ".join(JSON_COLUMNS)})
SELECT g.probe_id, g.target_id, g.region_id, g.day, g.samples, g.errors, g.tps_sum, g.tps_count, now(),
       {", ".join(_merged(c) for c in JSON_COLUMNS)}
FROM (
    SELECT probe_id, region_id, date_trunc('day', hour, 'UTC') AS day,
           (array_agg(target_id ORDER BY hour DESC))[1] AS target_id,
           sum(samples) AS samples, sum(errors) AS errors,
           sum(tokens_per_s_sum ORDER BY hour) AS tps_sum, sum(tokens_per_s_count) AS tps_count
    FROM probes_hourlyrollup
    GROUP BY 1, 2, 3
) g
"""


class Migration(migrations.Migration):
    dependencies = [("probes", "0002_seed_regions")]

    operations = [
        migrations.AddField(
            model_name="hourlyrollup",
            name="dns_hist",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.CreateModel(
            name="DailyRollup",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("day", models.DateTimeField(help_text="Start of the UTC day (midnight).")),
                ("samples", models.PositiveIntegerField(default=0)),
                ("errors", models.PositiveIntegerField(default=0, help_text="Samples whose outcome is not ok.")),
                ("outcomes", models.JSONField(blank=True, default=dict, help_text="Outcome name to count.")),
                ("ttft_hist", models.JSONField(blank=True, default=dict)),
                ("ttfat_hist", models.JSONField(blank=True, default=dict)),
                ("ttfb_hist", models.JSONField(blank=True, default=dict)),
                ("connect_hist", models.JSONField(blank=True, default=dict)),
                ("tls_hist", models.JSONField(blank=True, default=dict)),
                ("total_hist", models.JSONField(blank=True, default=dict)),
                ("dns_hist", models.JSONField(blank=True, default=dict)),
                ("tokens_per_s_sum", models.FloatField(default=0.0)),
                ("tokens_per_s_count", models.PositiveIntegerField(default=0)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "probe",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="daily_rollups",
                        to="probes.probe",
                    ),
                ),
                (
                    "region",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="daily_rollups", to="probes.region"
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="daily_rollups",
                        to="probes.target",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["target", "region", "day"], name="daily_target_region_day"),
                    models.Index(fields=["day"], name="daily_rollup_day"),
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("probe", "region", "day"), name="daily_rollup_one_per_day")
                ],
            },
        ),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
