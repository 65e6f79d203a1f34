"""Two writers ensuring the same missing day at the same moment (two ingest processes with a late row each) both
succeed: one creates the partition, the other finds it made."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from django.db import connection

from probes import partitions


def test_one_creates_it_and_neither_fails(fresh_days):
    day = (datetime.now(UTC) - timedelta(days=20)).date()
    start = threading.Barrier(2, timeout=30)
    results: dict[int, object] = {}

    def ensure(n: int) -> None:
        try:
            start.wait()
            # Each thread its own connection: a second process's session, as far as PostgreSQL can tell.
            results[n] = partitions.ensure_days(partitions.MEASUREMENTS, [day])
        except Exception as exc:  # reported by the assertion below
            results[n] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=ensure, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert sorted(map(str, results.values())) == sorted(["[]", str([day])])
    assert day in partitions.existing_days(partitions.MEASUREMENTS)
