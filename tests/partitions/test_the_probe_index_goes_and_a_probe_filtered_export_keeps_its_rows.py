"""Migration 0046 drops the (probe, started_at) index: a probe-filtered read (measurements.csv, the API) keeps
every row it had, through the slot key. Going back builds the index on every partition under the partition's
own name (probes.partitions.name_indexes). The database goes back to the latest migration for the other tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from probes import partitions
from probes.exports import ExportFilters
from probes.models import Measurement
from probes.readings.stored import stored_measurements
from tests.factories import MeasurementFactory
from tests.partitions.conftest import migrate

BEFORE = [("probes", "0045_slo_exclude_rate_limited_and_alert_metric_rate_limited")]
AFTER = [("probes", "0046_measurement_probe_index_dropped")]


def probe_indexes() -> dict[str, str]:
    """Each partition's index on (probe_id, started_at), by partition."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.relname, x.indexrelid::regclass::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_index x ON x.indrelid = c.oid WHERE i.inhparent = 'probes_measurement'::regclass "
            "AND pg_get_indexdef(x.indexrelid) LIKE '%%(probe_id, started_at)'"
        )
        return dict(cur.fetchall())


def probe_rows(probe_id: int, since: datetime, until: datetime) -> list[int]:
    rows = stored_measurements(ExportFilters(since=since, until=until, probe_ids=[probe_id]))
    return sorted(row["id"] for row in rows)


@pytest.fixture
def latest_after(fresh_days):
    try:
        yield
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_a_probes_rows_are_the_same_without_the_index_and_it_comes_back_named(latest_after, make_probe, make_region):
    regions = [make_region(slug="one"), make_region(slug="two")]
    probe, other = make_probe(regions=regions), make_probe(regions=regions)
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=2)
    partitions.ensure_days(partitions.MEASUREMENTS, [start.date(), (start + timedelta(days=1)).date()])
    Measurement.objects.bulk_create(
        MeasurementFactory.build_rows(
            [
                {
                    "probe_id": p.id,
                    "target_id": p.target_id,
                    "region_id": r.id,
                    "scheduled_for": start + timedelta(minutes=m),
                }
                for p in (probe, other)
                for r in regions
                for m in range(0, 36 * 60, 30)
            ]
        )
    )
    since, until = start + timedelta(hours=20), start + timedelta(hours=30)
    migrate(BEFORE)
    with_index = probe_rows(probe.id, since, until)
    assert len(with_index) == 2 * 10 * 2  # two regions, ten hours, a row every 30 minutes

    migrate(AFTER)
    assert probe_indexes() == {}
    assert probe_rows(probe.id, since, until) == with_index

    migrate(BEFORE)
    named = probe_indexes()
    assert named
    assert named == {part: f"{part}_meas_probe_started" for part in named}
    assert set(named) == {part.name for part in partitions.partitions(partitions.MEASUREMENTS)}
