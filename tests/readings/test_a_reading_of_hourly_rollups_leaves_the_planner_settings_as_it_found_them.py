"""Reading hourly rollups turns PostgreSQL's plain index scans off for that statement (probes.readings.rollup:
recent hourly rows lie scattered, and a bitmap scan reads each page once). The setting must not outlive the
statement: later statements of the same transaction, and the connection afterwards, plan as before."""

from __future__ import annotations

from django.db import connection, transaction

from latency.forms import dashboard_filters
from probes import readings
from probes.models import Measurement
from probes.readings.cache import merge_cache
from probes.readings.plan import coverage
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements


def index_scans() -> str:
    with connection.cursor() as cur:
        cur.execute("SHOW enable_indexscan")
        return cur.fetchone()[0]


def test_a_table_read_from_hourly_rollups_leaves_index_scans_on(make_probe, make_region, now):
    region = make_region(slug="near", name="Near")
    probe = make_probe(regions=[region])
    current = floor_hour(now)
    spread_measurements(probe, region, current - 24 * HOUR, now, 48, seed=3, median=180.0)
    rebuild_range(current - 24 * HOUR, current)
    merge_cache.clear()
    f = dashboard_filters({"window": ["24h"]}, now)

    with transaction.atomic():
        rows = readings.table(f)
        # Still inside the transaction that read them.
        assert index_scans() == "on"
    assert index_scans() == "on"

    # The hours really were read from rollups (the statement that turns the setting off ran), and all of them.
    assert coverage(f.since, f.until).hours
    in_window = Measurement.objects.filter(started_at__gte=f.since, started_at__lt=f.until).count()
    assert [row["samples"] for row in rows] == [in_window]
