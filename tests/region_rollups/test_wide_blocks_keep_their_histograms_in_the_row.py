"""Region and series blocks longer than PostgreSQL's default TOAST threshold (2,032 bytes) keep their histograms in
the row, uncompressed: a long read fetches each block as one heap tuple, not each histogram through the TOAST
index (migration 0027)."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import connection

from probes.rollups import DAY, rebuild_range
from probes.rollups.block_merge import HIST_COLUMNS
from tests.region_rollups.rows import fill

DEFAULT_TOAST_TARGET = 2032


def stored(table: str) -> list[tuple[int, int]]:
    """(the row's histograms' length, their size as stored) of every row of the table."""
    length = " + ".join(f"coalesce(octet_length({c}), 0)" for c in HIST_COLUMNS)
    size = " + ".join(f"coalesce(pg_column_size({c}), 0)" for c in HIST_COLUMNS)
    with connection.cursor() as cur:
        cur.execute(f"SELECT {length}, {size} FROM {table}")
        return cur.fetchall()


def out_of_line(table: str) -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass", [table])
        (toast,) = cur.fetchone()
        cur.execute(f"SELECT count(*) FROM {toast}")
        return cur.fetchone()[0]


def test_wide_region_and_series_blocks_are_stored_whole_in_their_rows(probes):
    day = datetime(2026, 3, 2, tzinfo=UTC)
    # Enough rows per block for histograms of dozens of buckets each: eight of them pass 2 KB.
    fill(probes, day, 24, per_hour=8, seed=7)
    rebuild_range(day, day + DAY)

    for table in ("probes_regionrollup", "probes_seriesrollup"):
        rows = stored(table)
        # Else the test would say nothing.
        assert any(length > DEFAULT_TOAST_TARGET for length, _ in rows), f"no wide row in {table}"
        # Neither compressed (smaller than its length) nor out of line (a pointer of 18 bytes).
        assert all(size >= length for length, size in rows), table
        assert out_of_line(table) == 0, table
