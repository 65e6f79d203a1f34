"""UTC hours and days: the units rollups are built, marked and read in.

Shared by the writers (probes.rollups) and the readers (probes.readings), so
both cut time at the same edges.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from probes.rollups.catalogue import REGION, SERIES_DAYS, SERIES_HOURS

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
# Time buckets and region rollup blocks are aligned to this origin, so the
# same bucket or block covers the same hours on every read.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The grains of the kinds of blocks, finest first (probes.rollups.catalogue holds them): each divides the next, so
# blocks nest and a coarser block is the merge of the finer ones inside it. The region rollups' ladder
# (probes.rollups.ladder); its 7 d blocks start on Thursdays (the weekday of EPOCH).
GRAINS = REGION.grains
# The series rollups' blocks of days (probes.rollups.series_blocks), the 2-day ones each the merge of the 12 h
# series blocks inside it, each coarser one of the blocks of the next finer grain, so that any run of complete days
# is a handful of blocks.
SERIES_GRAINS = SERIES_DAYS.grains
# The series rollups' blocks inside a day (probes.rollups.hour_blocks), merged from hourly rollups, dividing the day,
# so that the hours at a window's ends beside its complete days are a few rows per series.
SERIES_HOUR_GRAINS = SERIES_HOURS.grains


def sample_seconds_sql(alias: str) -> str:
    """SQL of an hourly rollup row's (alias) samples x its hour's midpoint in epoch seconds: summed over a block's
    hours it is the block's sample_seconds (region blocks and series blocks inside a day), from which a time-series
    point's `at` (the samples-weighted mean of hour midpoints) comes out as from the hourly rows. A whole number, so
    sums of it are exact in float8 below 2 ** 53."""
    return f"{alias}.samples * (extract(epoch FROM {alias}.hour) + 1800)"


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


def block_start(when: datetime, span: timedelta) -> datetime:
    """Start of the EPOCH-aligned block of length `span` holding `when`."""
    return EPOCH + ((when - EPOCH) // span) * span
