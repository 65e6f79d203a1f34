from django.db import migrations

# PostgreSQL moves a row's longest values out of line (its TOAST table) once the row passes toast_tuple_target,
# 2,032 bytes by default. Series and region blocks (eight histograms each) are longer than that, so those rows'
# histograms were fetched one by one through the TOAST index: the long-span blocks are exactly what a 30-day read
# of every target reads. At 8,160 bytes (the most a heap page holds) a block stays one heap tuple, compressed only
# when longer, and a first read touches fewer buffers (docs/benchmarks.md, "Blocks stored whole"). The tables'
# total size stays the same (what left the TOAST table joins the heap).
#
# Rows already stored keep their layout until rewritten: the rollup writes blocks anew as their days are rebuilt,
# and `manage.py rollup --since 61d` writes them all.
TABLES = ("probes_seriesrollup", "probes_regionrollup")


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0026_hourly_percentile_cells"),
    ]

    operations = [
        migrations.RunSQL(
            [f"ALTER TABLE {table} SET (toast_tuple_target = 8160)" for table in TABLES],
            reverse_sql=[f"ALTER TABLE {table} RESET (toast_tuple_target)" for table in TABLES],
        ),
    ]
