from django.db import migrations

# PostgreSQL moves a row's longest values out of line (its TOAST table) once the row passes toast_tuple_target,
# 2,032 bytes by default. A series block of 4 to 16 days is 2.1 to 4 KB, a region block 3 to 9 KB (eight
# histograms each), so those rows' histograms were fetched one by one through the TOAST index: the long-span
# blocks are exactly what a 30-day read of every target reads. At 8,160 bytes (the most a heap page holds) a block
# stays one heap tuple, compressed only when longer. Measured at bench/dashboard.py's 10 M rows, first read after a
# PostgreSQL restart: the days of the table of every target over 30 days 4,571 -> 1,947 buffers, 24 to 28 -> 19 to
# 21 ms; the region blocks of the 30-day time series of every target 11 to 14 -> 10 to 11 ms, of its phases 5.5 to
# 6.3 -> 3.5 ms. The tables' total size stays the same (what left the TOAST table joins the heap).
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
