from django.db import migrations, models

# The series blocks inside a day (3 h and 12 h) built before this migration get their sample_seconds from their
# hourly rollups, exactly what probes.rollups.hour_blocks now writes with them: samples x the hour's midpoint in
# epoch seconds, summed (numeric, so exact) over the block's hours of its probe and region. A marked block is the
# merge of those hourly rows as they are (its mark says so), so the sum is the block's own. A block left without one
# (its hourly rows gone) loses its mark: a reader then never takes it, and the rebuild of its hours writes it anew.
GRAINS = (3, 12)  # probes.rollups.periods.SERIES_HOUR_GRAINS when this was written

BACKFILL = """
UPDATE probes_seriesrollup s SET sample_seconds = h.seconds
FROM (
    SELECT probe_id, region_id, date_bin(interval '{grain} hours', hour, timestamptz '1970-01-01 00:00:00+00') AS start,
           sum(samples * (extract(epoch FROM hour) + 1800)) AS seconds
    FROM probes_hourlyrollup
    GROUP BY 1, 2, 3
) h
WHERE s.span_hours = {grain} AND s.probe_id = h.probe_id AND s.region_id = h.region_id AND s.start = h.start
"""

UNMARK = """
DELETE FROM probes_seriesblockmark m
WHERE m.span_hours IN ({grains}) AND EXISTS (
    SELECT 1 FROM probes_seriesrollup s
    WHERE s.span_hours = m.span_hours AND s.start = m.start AND s.sample_seconds IS NULL
)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0027_block_histograms_stay_in_their_rows"),
    ]

    operations = [
        migrations.AddField(
            model_name="seriesrollup",
            name="sample_seconds",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.RunSQL(
            [BACKFILL.format(grain=grain) for grain in GRAINS] + [UNMARK.format(grains=", ".join(map(str, GRAINS)))],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
