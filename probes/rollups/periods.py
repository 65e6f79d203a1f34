"""UTC hours and days: the units rollups are built, marked and read in.

Shared by the writers (probes.rollups) and the readers (probes.readings), so
both cut time at the same edges.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


def floor_hour(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def floor_day(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def ceil_hour(when: datetime) -> datetime:
    start = floor_hour(when)
    return start if start == when else start + HOUR


def hours_between(since: datetime, until: datetime) -> list[datetime]:
    hours = []
    hour = floor_hour(since)
    while hour < until:
        hours.append(hour)
        hour += HOUR
    return hours


def hour_runs(hours: Iterable[datetime]) -> list[tuple[datetime, datetime]]:
    """Consecutive hours merged into [start, end) ranges: a few range
    conditions use an index better than an IN list of hundreds of hours."""
    runs: list[tuple[datetime, datetime]] = []
    for hour in sorted(hours):
        if runs and runs[-1][1] == hour:
            runs[-1] = (runs[-1][0], hour + HOUR)
        else:
            runs.append((hour, hour + HOUR))
    return runs
