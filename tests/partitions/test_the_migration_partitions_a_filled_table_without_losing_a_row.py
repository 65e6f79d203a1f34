"""Migration 0017 on a database filled by the previous schema: every row kept with its id and values, in its day's
partition; a row breaking the slot rule kept as a dead letter; the slot key still unique across the whole table;
new ids after the old ones. The database goes back to the latest migration for the other tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from probes import partitions
from probes.models import DeadLetter, Measurement
from tests.factories import ProbeFactory, RegionFactory
from tests.partitions.conftest import migrate, partition_of

BEFORE = [("probes", "0016_api_token")]
AFTER = [("probes", "0017_measurement_partitions")]
COLUMNS = "id, probe_id, target_id, region_id, scheduled_for, started_at, worker, outcome, ttft_ms, total_ms"


def rows() -> dict[int, tuple]:
    with connection.cursor() as cur:
        cur.execute(f"SELECT {COLUMNS} FROM probes_measurement ORDER BY id")
        return {row[0]: row for row in cur.fetchall()}


def insert(probe, region, slot: datetime, started: datetime, n: int) -> int:
    """A measurement of the columns every schema since 0016 has (the factories write today's)."""
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO probes_measurement ({COLUMNS.replace('id, ', '', 1)}, connection, ingested_at) "
            "VALUES (%s, %s, %s, %s, %s, 'w', 'ok', %s, %s, 'warm', now()) RETURNING id",
            [probe.id, probe.target_id, region.id, slot, started, 100.0 + n, 400.0 + n],
        )
        return cur.fetchone()[0]


@pytest.fixture
def previous_schema(fresh_days):
    # Made by today's schema, then taken back with the database: the factories write today's columns.
    region = RegionFactory()
    probe = ProbeFactory(regions=[region])
    migrate(BEFORE)
    try:
        yield probe, region
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_every_row_is_kept_in_its_days_partition(previous_schema, capsys):
    probe, region = previous_schema
    days_ago = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=5)
    slots = [days_ago + timedelta(days=d, minutes=m) for d in range(3) for m in (0, 1, 2)]
    for n, slot in enumerate(slots):
        insert(probe, region, slot, slot + timedelta(seconds=n), n)
    with connection.cursor() as cur:
        # An old worker's clock two hours behind its slot: the new CHECK cannot hold it.
        skewed = days_ago + timedelta(days=1, minutes=30)
        cur.execute(
            "INSERT INTO probes_measurement (probe_id, target_id, region_id, scheduled_for, started_at, worker, "
            "outcome, connection, ingested_at) VALUES (%s, %s, %s, %s, %s, 'old-worker', 'ok', 'warm', now()) "
            "RETURNING id",
            [probe.id, probe.target_id, region.id, skewed, skewed + timedelta(hours=2)],
        )
        (skewed_id,) = cur.fetchone()
    kept = rows()
    del kept[skewed_id]

    migrate(AFTER)

    assert rows() == kept
    for row_id, row in kept.items():
        assert partition_of("probes_measurement", row_id) == partitions.MEASUREMENTS.day_name(row[4].date())
    # Only the columns 0017 knows: later migrations add others, which the model reads by default.
    letter = DeadLetter.objects.values("payload", "worker", "reason", "source").get()
    assert letter["payload"]["id"] == skewed_id and letter["worker"] == "old-worker"
    assert "not within" in letter["reason"] and "0017" in letter["source"]
    printed = capsys.readouterr().out
    assert "rows/s" in printed and "1 rows broke the slot rule" in printed

    with pytest.raises(IntegrityError), transaction.atomic():
        insert(probe, region, slots[0], slots[0], 0)
    later = slots[0] + timedelta(days=30)
    newer = insert(probe, region, later, later, 0)
    assert newer > max(kept) and newer > skewed_id
    assert Measurement.objects.count() == len(kept) + 1
