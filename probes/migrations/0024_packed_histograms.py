"""Rollup histograms from sparse jsonb ({"12": 3}) to packed bytes (probes.packed): every hourly, daily, series and
region rollup row converted in place, one table at a time (one rewrite each), with its rows and time printed."""

import sys
import time

from django.db import migrations

import probes.rollup_models

# Frozen: the tables and histogram columns as 0022 left them.
TABLES = ("probes_hourlyrollup", "probes_dailyrollup", "probes_seriesrollup", "probes_regionrollup")
MODELS = ("hourlyrollup", "dailyrollup", "seriesrollup", "regionrollup")
COLUMNS = ("ttft_hist", "ttfat_hist", "ttfb_hist", "connect_hist", "tls_hist", "total_hist", "dns_hist",
           "tokens_per_s_hist")

# probes.packed's form, written out here so that this migration keeps meaning what it meant.
FUNCTIONS = """
CREATE FUNCTION pg_temp.latency_packed(h jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(string_agg(int2send(key::int2) || int4send(value::int4), ''::bytea ORDER BY key::int),
                    ''::bytea)
    FROM jsonb_each_text(h) WHERE value::bigint <> 0
$$;
CREATE FUNCTION pg_temp.latency_sparse(h bytea) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_object_agg((get_byte(x.d, o) << 8) | get_byte(x.d, o + 1),
                                     (get_byte(x.d, o + 2)::int8 << 24) | (get_byte(x.d, o + 3) << 16)
                                     | (get_byte(x.d, o + 4) << 8) | get_byte(x.d, o + 5)), '{}'::jsonb)
    -- Copied out once: get_byte would decompress a compressed value at every call.
    FROM (SELECT h || ''::bytea AS d OFFSET 0) AS x CROSS JOIN LATERAL generate_series(0, length(x.d) - 6, 6) AS o
$$;
"""


def _convert(schema_editor, to_type: str, function: str, default: str) -> None:
    with schema_editor.connection.cursor() as cur:
        cur.execute(FUNCTIONS)
        for table in TABLES:
            started = time.monotonic()
            changes = ", ".join(
                f"ALTER COLUMN {c} DROP DEFAULT, ALTER COLUMN {c} TYPE {to_type} USING pg_temp.{function}({c})"
                for c in COLUMNS
            )
            cur.execute(f"ALTER TABLE {table} {changes}, ALTER COLUMN tokens_per_s_hist SET DEFAULT {default}")
            cur.execute(f"SELECT count(*) FROM {table}")
            (rows,) = cur.fetchone()
            if rows:
                sys.stdout.write(f"\n  {table}: {rows:,} rows in {time.monotonic() - started:.1f} s")
                sys.stdout.flush()
        cur.execute("DROP FUNCTION pg_temp.latency_packed(jsonb); DROP FUNCTION pg_temp.latency_sparse(bytea)")


def to_packed(apps, schema_editor):
    _convert(schema_editor, "bytea", "latency_packed", "''::bytea")


def to_jsonb(apps, schema_editor):
    _convert(schema_editor, "jsonb", "latency_sparse", "'{}'::jsonb")


def _state():
    for model in MODELS:
        for column in COLUMNS:
            kwargs = {"db_default": b""} if column == "tokens_per_s_hist" else {}
            yield migrations.AlterField(
                model_name=model, name=column, field=probes.rollup_models.HistogramField(**kwargs)
            )


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0023_hourly_ranks_only_alone"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(to_packed, to_jsonb)],
            state_operations=list(_state()),
        ),
    ]
