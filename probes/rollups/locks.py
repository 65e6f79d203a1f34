"""How rollups stay consistent with concurrent writers, without a rebuild ever
holding ingest up.

Rebuilds against each other: advisory locks. PostgreSQL advisory locks are
named by two integers: the first says what is locked (a LockSpace below), the
second which period (a CRC of its start). Transaction-scoped
(pg_advisory_xact_lock): released at commit or rollback, so no code path can
forget one. Ingest takes none of them.

Rebuilds against ingest: a compare-and-swap on a per-hour counter
(probes.models.HourVersion), because the danger is not a torn read but a
false mark: a row committed after a rebuild's snapshot is missing from the
rollups it writes, and the hour must then not be marked complete. So:

- ingest, in the transaction that stores rows into hours H, after the INSERT:
  bumps H's version (count_ingest), then deletes H's marks;
- a rebuild reads the versions of its hours (read_versions) in a statement
  *before* the one that reads raw rows, builds, merges the blocks, and only at
  the very end, just before commit, locks the version rows and re-reads them
  (unchanged_hours); it writes a mark only for an hour whose version did not
  move.

Why that holds under READ COMMITTED (every statement its own snapshot): a row
the build statement did not see was committed after that statement began, so
its transaction's bump was committed after the versions were read, or not
yet. If it is committed when the rebuild locks the version row, the rebuild
sees the new version and writes no mark. If it is in flight holding the row
lock, the rebuild's lock waits for it (a bump is the ingest's last writes
but the marks' delete, so the wait is its commit) and then sees it. If its
bump has not run yet, the bump waits for the rebuild's commit, and the
ingest's delete of marks, a later statement, then sees and removes the mark
the rebuild wrote. In every case the hour ends unmarked or counting the row.

Ingest never waits for a build: only for the instant between a rebuild's
final version lock and its commit (a few mark rows), and two ingests into one
hour wait for each other only from the bump to their commit.

Which rows a rebuild counted: the cut (take_cut). Each rebuild reads the
highest id drawn from the measurement sequence while no ingest is in flight
(ingest holds INGEST_IDS shared from before its INSERT to its commit; the
rebuild takes it exclusive for that one read), and counts only rows at or
below it. So its rollups count exactly the hour's rows up to the cut, every
one committed, and any row stored later has a higher id. HourCut records
the cut, and readers read an unmarked hour as its rollups plus its rows above
the cut (probes.readings.plan) instead of reading the whole hour raw. The
version check above still decides the marks: a row above the cut was stored
by an ingest that bumped the version after the rebuild read it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from datetime import datetime
from enum import IntEnum

from django.db import connection, transaction

from probes.rollups.periods import floor_day, floor_hour


class LockSpace(IntEnum):
    # 7141 was HOUR_ROWS, the hour lock ingest took shared and a rebuild
    # exclusive for the whole rebuild; the version compare-and-swap above
    # replaced it. Not reused, so an old process still running during an
    # upgrade cannot collide with a new meaning.
    #
    # One UTC day's rollups, exclusive by a rebuild of any of its hours: two
    # rebuilds of one hour would otherwise both insert its rollups, and two
    # hours of one day rebuilt at once could each merge a block of the day
    # (region and series blocks) without the other's hour.
    DAY_MERGE = 7142
    # The whole configuration, exclusive by `manage.py atlas apply` (probes.config_as_code.apply): two applies
    # at once would each plan against a database the other is changing.
    CONFIG_APPLY = 7143
    # One partitioned table's set of partitions, exclusive by probes.partitions while it creates, detaches or
    # drops one: two processes ensuring the same day at once would otherwise both try to create it.
    PARTITIONS = 7144
    # One 7-day block of region rollups (probes.rollups.ladder), exclusive while a rebuild merges it: the rebuilds
    # of two of its days run side by side (rebuild_range's workers), and each must merge the other's committed day.
    REGION_WEEK = 7145
    # One 16-day block of series rollups (probes.rollups.series_blocks) and every finer block inside it,
    # exclusive while a rebuild unmarks or merges them, for the same reason as REGION_WEEK.
    SERIES_BLOCK = 7146
    # Measurement ids: shared by every ingest transaction from before its INSERT to its commit, exclusive by a
    # rebuild for the instant it reads the id sequence (take_cut).
    INGEST_IDS = 7147
    # The central signing key (probes.fleet.central), exclusive while one is created or rotated: two processes
    # needing a key at once must not both make one.
    CENTRAL_KEY = 7148


def _key(start: datetime) -> int:
    # crc32 is unsigned; the lock's second key is a signed int4.
    return zlib.crc32(start.isoformat().encode()) - 2**31


def lock_day(day: datetime) -> None:
    """Holding this until commit makes a second rebuild of the day wait and
    then see the first one's rollups (read committed takes a fresh snapshot
    per statement). One lock per rebuild transaction (rebuilds never span
    days), so rebuilds cannot deadlock on it."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [int(LockSpace.DAY_MERGE), _key(floor_day(day))])


def lock_region_week(start: datetime) -> None:
    """Taken after lock_day by a rebuild, before it merges the 7-day region block starting at `start`; every
    rebuild takes them in that order, so they cannot deadlock."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [int(LockSpace.REGION_WEEK), _key(start)])


def lock_series_block(start: datetime) -> None:
    """Taken last by a rebuild (after lock_day and lock_region_week), or alone by a range rebuild's closing pass
    over the series blocks, one block after another in time order: no two takers can wait on each other."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [int(LockSpace.SERIES_BLOCK), _key(start)])


def hold_ingest_ids() -> None:
    """Ingest's side of take_cut: call it in the storing transaction before the INSERT draws ids from the
    sequence. Shared, so ingests never wait for each other; held until commit."""
    with connection.cursor() as cur:
        cur.execute(hold_ingest_ids_sql())


def hold_ingest_ids_sql() -> str:
    """hold_ingest_ids' statement, for a caller that sends it together with others in one round trip."""
    return f"SELECT pg_advisory_xact_lock_shared({int(LockSpace.INGEST_IDS)}, 0)"


def take_cut() -> int:
    """The highest measurement id drawn so far, at an instant when no ingest transaction was in flight: every
    row with an id at or below it is committed (or rolled back) when this returns, so a statement run after it
    sees all of them, and every row stored later has a higher id. A rebuild counts only the rows at or below
    its cut, and readers add the hour's rows above it (probes.models.HourCut) instead of reading it raw.

    The lock is the session's, taken and released around one read: ingest waits only for that instant (and
    for ingests already in flight to commit), never for a build. A transaction-scoped lock would be held until
    the rebuild's commit. The read runs in a savepoint, so a failure there leaves the transaction able to run
    the unlock."""
    cut = _cut(wait=True)
    assert cut is not None
    return cut


def try_take_cut() -> int | None:
    """take_cut, or None at once when an ingest is in flight: for ingest's own counter, which must never wait for
    another ingest's transaction (that transaction may be waiting for this one's caller)."""
    return _cut(wait=False)


def _cut(*, wait: bool) -> int | None:
    from probes.models import Measurement

    key = int(LockSpace.INGEST_IDS)
    with connection.cursor() as cur:
        if wait:
            cur.execute("SELECT pg_advisory_lock(%s, 0)", [key])
        else:
            cur.execute("SELECT pg_try_advisory_lock(%s, 0)", [key])
            if not cur.fetchone()[0]:
                return None
        try:
            with transaction.atomic():
                cur.execute(
                    "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence(%s, 'id')::regclass), 0)",
                    [Measurement._meta.db_table],
                )
                (cut,) = cur.fetchone()
        finally:
            cur.execute("SELECT pg_advisory_unlock(%s, 0)", [key])
    return int(cut)


def _table() -> str:
    from probes.models import HourVersion

    return HourVersion._meta.db_table


def _add_to_versions(keys: list[datetime], step: int) -> dict[datetime, int]:
    """Add `step` to the hours' versions (a missing hour's row starts at `step`), row-locking them until commit;
    their versions now. One upsert for both sides: ingest counts with step 1, a rebuild locks and reads with 0.
    In hour order, so two callers take the rows in one order and never deadlock."""
    table = _table()
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {table} (hour, version) SELECT h, %s FROM unnest(%s::timestamptz[]) AS h ORDER BY h "
            f"ON CONFLICT (hour) DO UPDATE SET version = {table}.version + %s RETURNING hour, version",
            [step, keys, step],
        )
        return dict(cur.fetchall())


def count_ingest(hours: Iterable[datetime]) -> None:
    """Ingest's side: its transaction stored rows into these hours. Call it
    after the INSERT and before deleting the hours' marks."""
    keys = sorted({floor_hour(h) for h in hours})
    if keys:
        _add_to_versions(keys, 1)


def read_versions(hours: Iterable[datetime]) -> dict[datetime, int]:
    """A rebuild's first step, in a statement before the one reading raw rows.
    An hour never ingested into has version 0."""
    keys = sorted({floor_hour(h) for h in hours})
    with connection.cursor() as cur:
        cur.execute(f"SELECT hour, version FROM {_table()} WHERE hour = ANY(%s)", [keys])
        found = dict(cur.fetchall())
    return {h: found.get(h, 0) for h in keys}


def unchanged_hours(versions: dict[datetime, int]) -> set[datetime]:
    """A rebuild's last step before writing marks and committing: lock the
    hours' version rows (waiting for an ingest in flight in them) and return
    the hours no ingest committed into since read_versions. The locks are
    held until commit, so call it last."""
    keys = sorted(versions)
    if not keys:
        return set()
    # An upsert of nothing rather than SELECT ... FOR UPDATE: it also creates
    # (and locks) the row of an hour never ingested into, which a concurrent
    # first ingest would otherwise insert unseen.
    now = _add_to_versions(keys, 0)
    return {h for h in keys if now[h] == versions[h]}
