from django.db import migrations, models

from probes.metrics import PERCENTILES, REGION_CSV
from probes.significant import cells_sql, names_sql

# The length of ranks: a bucket index per REGION_CSV metric x PERCENTILES (probes.readings.rolled_buckets.WIDTH).
WIDTH = len(REGION_CSV) * len(PERCENTILES)

# The ranks written so far become the cells regions.csv writes from them (probes.significant, as it is when this
# runs: the rows then hold what the builder writes from now on). One statement, with the hour index off the table
# meanwhile: every row with ranks is written anew, and an index entry each would only be thrown away.
CELLS_FROM_RANKS = f"""
    UPDATE probes_hourlyrollup SET percentile_cells = {cells_sql([f"ranks[{i + 1}]" for i in range(WIDTH)], "sig.t")}
    FROM (SELECT {names_sql()} AS t) sig
    WHERE ranks IS NOT NULL
"""


class Migration(migrations.Migration):
    # A row that was a whole 1 h group of regions.csv kept the bucket indexes of its percentiles (ranks), which
    # the export then formatted, one expression per cell: a large share of its statement. It keeps their text now.

    dependencies = [
        ("probes", "0025_hour_cuts"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="hourlyrollup",
            name="rollup_hour_covering",
        ),
        migrations.AddField(
            model_name="hourlyrollup",
            name="percentile_cells",
            field=models.TextField(blank=True, editable=False, null=True),
        ),
        migrations.RunSQL(CELLS_FROM_RANKS, reverse_sql=migrations.RunSQL.noop),
        migrations.RemoveField(
            model_name="hourlyrollup",
            name="ranks",
        ),
        migrations.AddIndex(
            model_name="hourlyrollup",
            index=models.Index(
                fields=["hour"],
                include=("region_id", "target_id", "probe_id", "id", "samples", "errors", "percentile_cells"),
                name="rollup_hour_covering",
            ),
        ),
    ]
