"""Migration 0018 on observations stored by the previous schema: every row kept with its id and values in its
day's partition, new ids after the old ones; back to the latest migration afterwards."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from probes import partitions
from tests.factories import IngestSourceFactory, ObservationFactory
from tests.partitions.conftest import migrate, partition_of

COLUMNS = "id, source_id, kind, observed_at, received_at, model, host, ttft_ms, total_ms"


def rows() -> dict[int, tuple]:
    with connection.cursor() as cur:
        cur.execute(f"SELECT {COLUMNS} FROM probes_observation ORDER BY id")
        return {row[0]: row for row in cur.fetchall()}


@pytest.fixture
def previous_schema(fresh_days):
    migrate([("probes", "0017_measurement_partitions")])
    try:
        yield
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_every_observation_is_kept_in_its_days_partition(previous_schema):
    source = IngestSourceFactory()
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=4)
    with connection.cursor() as cur:
        for n in range(6):
            cur.execute(
                "INSERT INTO probes_observation (source_id, kind, observed_at, received_at, provider, host, model, "
                "operation, service, country, city, place_from, ttft_ms, ttft_from, total_ms, error_type) "
                "VALUES (%s, 'span', %s, now(), '', 'api.openai.com', 'gpt-4o', '', '', '', '', 'none', %s, '', %s, "
                "'')",
                [source.id, start + timedelta(hours=17 * n), 100.0 + n, 900.0 + n],
            )
    kept = rows()

    migrate([("probes", "0018_observation_partitions")])

    assert rows() == kept
    for row_id, row in kept.items():
        assert partition_of("probes_observation", row_id) == partitions.OBSERVATIONS.day_name(row[3].date())
    assert ObservationFactory(source=source).id > max(kept)
