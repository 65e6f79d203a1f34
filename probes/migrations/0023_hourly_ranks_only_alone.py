from django.db import migrations

# Frozen: the table as 0021 left it. Rows sharing their (hour, region, target) with another probe's row lose their
# ranks, which from now on mark a row alone in its regions.csv 1 h group (HourlyRollup.ranks); regions.csv merges
# those rows' histograms instead. One statement over the rows with ranks, grouped once.
SHARED_RANKS = """
    UPDATE probes_hourlyrollup h SET ranks = NULL
    FROM (
        SELECT hour, region_id, target_id FROM probes_hourlyrollup
        GROUP BY hour, region_id, target_id HAVING count(*) > 1
    ) shared
    WHERE h.ranks IS NOT NULL AND h.hour = shared.hour AND h.region_id = shared.region_id
      AND h.target_id = shared.target_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0022_series_rollups"),
    ]

    operations = [
        migrations.RunSQL(SHARED_RANKS, reverse_sql=migrations.RunSQL.noop),
    ]
