"""Partitions made by a test that commits (transactional_db) outlive its flush: they are dropped again here, so
every test sees the days the migration made and no others."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from probes import partitions


def migrate(targets: list[tuple[str, str]]) -> None:
    """Migrate the test database to `targets`, forwards or backwards, as `manage.py migrate` would."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def partition_of(table: str, row_id: int) -> str:
    """The partition holding a row (its tableoid)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT tableoid::regclass::text FROM {table} WHERE id = %s", [row_id])
        return cur.fetchone()[0]


@pytest.fixture
def fresh_days(transactional_db) -> Iterator[None]:
    before = {spec.table: partitions.existing_days(spec) for spec in partitions.partitioned_tables()}
    yield
    for spec in partitions.partitioned_tables():
        for day in partitions.existing_days(spec) - before.get(spec.table, set()):
            partitions.drop_day(spec, day)
    partitions.forget_known()
