"""Deleting old rows without one long transaction: the retention of raw measurements and of dead letters."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import connection, models, transaction


def delete_older_than(model: type[models.Model], column: str, cutoff: datetime) -> int:
    """Delete the model's rows whose `column` is before `cutoff`, LATENCY_PRUNE_BATCH rows per transaction,
    so locks stay short and ingest keeps writing meanwhile. Returns how many were deleted."""
    # A field name, never text from outside.
    return delete_table_rows_older_than(model._meta.db_table, model._meta.get_field(column).column, cutoff)


def delete_table_rows_older_than(table: str, column: str, cutoff: datetime) -> int:
    """delete_older_than for a table without a model of its own (a partition); `table` and `column` are names
    from code, never from outside."""
    batch = settings.LATENCY_PRUNE_BATCH
    deleted = 0
    while True:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(
                f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE {column} < %s LIMIT %s)",
                [cutoff, batch],
            )
            n: int = cur.rowcount
        deleted += n
        if n < batch:
            return deleted
