"""How far a measurement's start (started_at, the worker's clock) may stray from its schedule slot (scheduled_for):
the one rule that lets a reader of a started_at window name the slot-time partitions it needs.

Raw measurements are stored in partitions by day of their slot (scheduled_for: the idempotency key's time, so the
unique slot key holds across partitions), while every reading, rollup and export selects by started_at. A run
starts at its slot, or later when its region's workers are busy, never more than SLOT_LATE after it (the schedule's
tasks expire before then: probes.scheduling); or earlier by its worker's clock skew, at most SLOT_EARLY (ingest
refuses more, as a classified dead letter). The database holds every row to it (the CHECK constraint
measurement_started_near_slot), so adding slot_bounds' range to a started_at window selects exactly the same rows,
from the partitions of the days that range overlaps and no others.

Plain Python: region workers and the schedule read it too.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# A worker's clock ahead of the scheduler's by more than this is broken, not late: its rows are refused.
SLOT_EARLY = timedelta(minutes=5)
# A run that could not start within an hour of its slot is a missed run (probes.fleet.missed), not a late one: its
# task expires first (probes.scheduling caps every expiry below this).
SLOT_LATE = timedelta(hours=1)
# How far past now plus its probe's interval a result's slot may lie before ingest refuses it (slot_is_ahead). The
# slot comes from the scheduler's clock (the order names it; the worker sends it back as it was), published
# LEAD_S ahead of its moment (probes.scheduling): so a real result's slot is at most that lead ahead of the
# ingest's clock, plus however far the scheduler's host's clock runs ahead of the ingest's. A worker's own clock
# offset (its heartbeats report it; it moves started_at, never the slot) does not count here, but the central
# hosts are allowed the same disagreement as workers are: SLOT_EARLY. Without a bound, a region's key holder could
# store results for that region's slots up to a day ahead (FUTURE_SLACK), and the real results for those slots were
# then ignored by the insert-or-ignore on the slot key.
SLOT_AHEAD_GRACE = SLOT_EARLY


def slot_bounds(since: datetime, until: datetime) -> tuple[datetime, datetime]:
    """[low, high) of scheduled_for that holds every row with since <= started_at < until: the rule's range
    rounded out to whole UTC days, the partitions' unit, so it names the same partitions.

    Rounded because a tight range misleads the planner: it takes it for a selective condition of its own, on top
    of the started_at one it repeats, and ANDs a bitmap of it from the (id, scheduled_for) primary key, which it
    can only read whole. The raw read of the phases of every target over its last hour read that day's whole key
    to drop no row; with whole days no index on scheduled_for looks selective (docs/architecture/storage.md,
    "Partitions")."""
    return _floor_day(since - SLOT_LATE), _ceil_day(until + SLOT_EARLY)


def _floor_day(when: datetime) -> datetime:
    # probes.rollups.periods.floor_day's cut, written again: importing probes.rollups here would run its package,
    # whose build module imports this one (a cycle), and would bring Django into what region workers import.
    return when.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _ceil_day(when: datetime) -> datetime:
    day = _floor_day(when)
    return day if day == when else day + timedelta(days=1)


def started_near_slot(started_at: datetime, scheduled_for: datetime) -> bool:
    """Whether a run's start is one the rule allows for its slot (what ingest checks before the database does)."""
    return scheduled_for - SLOT_EARLY <= started_at <= scheduled_for + SLOT_LATE


def slot_is_ahead(scheduled_for: datetime, now: datetime, interval_s: int) -> bool:
    """Whether a result's slot is one no order can have been sent for yet: later than now plus the probe's
    interval (the next slot) and SLOT_AHEAD_GRACE."""
    return scheduled_for > now + timedelta(seconds=interval_s) + SLOT_AHEAD_GRACE
