"""The advisory locks that keep rollups consistent with concurrent writers.

PostgreSQL advisory locks are named by two integers: the first says what is
locked (a LockSpace below), the second which period (a CRC of its start).
Transaction-scoped (pg_advisory_xact_lock*): released at commit or rollback,
so no code path can forget one.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from datetime import datetime
from enum import IntEnum

from django.db import connection

from probes.rollups.periods import floor_day, floor_hour


class LockSpace(IntEnum):
    # One UTC hour of raw rows. Shared by ingest's INSERT into the hour
    # (probes.ingest._insert), exclusive by rebuild_hour's read of it: a row
    # committed during a rebuild would otherwise be missed while the hour is
    # marked complete.
    HOUR_ROWS = 7141
    # One UTC day's DailyRollup rows, exclusive by rebuild_day's merge of the
    # day's hourly rollups, so two hours of one day rebuilt at once cannot
    # each write a daily row without the other's hour.
    DAY_MERGE = 7142
    # The whole configuration, exclusive by `manage.py atlas apply` (probes.config_as_code.apply): two applies
    # at once would each plan against a database the other is changing.
    CONFIG_APPLY = 7143
    # One partitioned table's set of partitions, exclusive by probes.partitions while it creates, detaches or
    # drops one: two processes ensuring the same day at once would otherwise both try to create it.
    PARTITIONS = 7144


def _key(start: datetime) -> int:
    # crc32 is unsigned; the lock's second key is a signed int4.
    return zlib.crc32(start.isoformat().encode()) - 2**31


def lock_hours(hours: Iterable[datetime], *, shared: bool = False) -> None:
    """Serialise a rebuild of an hour with ingest into it. Ingest takes the
    lock shared (batches never wait for each other), a rebuild exclusive.
    Sorted, so two lockers never deadlock."""
    keys = sorted({_key(floor_hour(h)) for h in hours})
    fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    with connection.cursor() as cur:
        for key in keys:
            cur.execute(f"SELECT {fn}(%s, %s)", [int(LockSpace.HOUR_ROWS), key])


def lock_day(day: datetime) -> None:
    """Holding this until commit makes a second merge of the day wait and
    then see the first one's hour (read committed takes a fresh snapshot per
    statement). Always taken after the hour lock, never before, so rebuilds
    cannot deadlock."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [int(LockSpace.DAY_MERGE), _key(floor_day(day))])
