"""Where an objective's windows start and end, and how a window is cut into what each kind of count reads
(probes.readings.slo_counts): whole days, whole hours, recent whole five minutes and raw rows. UTC throughout."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

HOUR = timedelta(hours=1)


def window_of(window: str, now: datetime) -> tuple[datetime, datetime]:
    """The objective's window ending now: the last 28 or 30 days, or the calendar month so far (UTC)."""
    from probes.models import ServiceLevelObjective as SLO

    if window == SLO.ROLLING_28D:
        return now - timedelta(days=28), now
    if window == SLO.CALENDAR_MONTH:
        return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0), now
    return now - timedelta(days=30), now


def window_length(window: str, now: datetime) -> timedelta:
    """The whole window's length: what a burn rate of 1 takes to spend the budget (a calendar month's days)."""
    from probes.models import ServiceLevelObjective as SLO

    if window == SLO.ROLLING_28D:
        return timedelta(days=28)
    if window == SLO.CALENDAR_MONTH:
        start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        following = (start + timedelta(days=32)).replace(day=1)
        return following - start
    return timedelta(days=30)


# A window ending no earlier than this before the clock ends at the present (the caller read the clock a moment
# ago): its current hour is read from that hour's count, which holds no call of a later slot.
PRESENT_SLACK = timedelta(seconds=60)
# Windows at least this long start at the first whole hour inside them.
WHOLE_HOURS_FROM = timedelta(hours=24)


def reading_start(since: datetime, length: timedelta) -> datetime:
    """Where a window of `length` ending now is read from: since itself below a day; from a day up, the first whole
    hour at or after since (at most an hour later: under 5 % of a day, 0.14 % of 30 days). Only the windows under a
    day then read raw rows at their start; every window reads the current hour's raw rows at its end."""
    return ceil_hour(since) if length >= WHOLE_HOURS_FROM else since


def month_bounds(period: str) -> tuple[datetime, datetime]:
    """[first instant, first instant of the next) of a calendar month "YYYY-MM", UTC. ValueError when malformed."""
    start = datetime.strptime(period, "%Y-%m").replace(tzinfo=UTC)
    return start, (start + timedelta(days=32)).replace(day=1)


def floor_hour(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def ceil_hour(when: datetime) -> datetime:
    floor = floor_hour(when)
    return floor if floor == when else floor + HOUR


def floor_day(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def ceil_day(when: datetime) -> datetime:
    floor = floor_day(when)
    return floor if floor == when else floor + timedelta(days=1)


Span = tuple[datetime, datetime]


FIVE_MINUTES = timedelta(minutes=5)
# How far back the five-minute counts (SLOFiveMinuteCount) are read: whole hours before the current one. The counter
# keeps FIVE_MINUTES_KEPT_HOURS of them (probes.slos.classify), an hour more, so a span read is never one it has
# pruned or one whose calls it counted before they were recent enough to keep.
FIVE_MINUTES_READ_HOURS = 7


def floor_five(when: datetime) -> datetime:
    when = when.astimezone(UTC)
    return when.replace(minute=when.minute - when.minute % 5, second=0, microsecond=0)


def ceil_five(when: datetime) -> datetime:
    floor = floor_five(when)
    return floor if floor == when else floor + FIVE_MINUTES


@dataclass
class Split:
    """A window cut into what each kind of count reads: whole days (day counts), other whole hours (hour counts),
    recent whole five minutes (five-minute counts) and what is left (raw rows)."""

    days: Span | None = None
    hours: list[Span] = field(default_factory=list)
    fives: list[Span] = field(default_factory=list)
    raw: list[Span] = field(default_factory=list)


def split_window(
    since: datetime,
    until: datetime,
    days: bool = True,
    open_end: bool = False,
    fives_from: datetime | None = None,
) -> Split:
    """[since, until) as its whole days (from the day counts, unless days is False), its other whole hours (from
    the hour counts), the whole five minutes of its partial hours at or after fives_from (from the five-minute
    counts) and the rest (from raw rows). open_end: until is the present, so the count of its day (or of its hour,
    or five minutes, when the window starts inside that day, or hour) holds the calls so far and is read whole."""
    if until <= since:
        return Split()
    if open_end and days and since <= floor_day(until):
        until = ceil_day(until)  # today read from today's day count
    elif open_end and since <= floor_hour(until):
        until = ceil_hour(until)  # the current hour read from its hour count
    low, high = ceil_hour(since), floor_hour(until)
    out = Split()
    if low >= high:
        partial = [(since, until)]
    else:
        partial = [span for span in ((since, low), (high, until)) if span[0] < span[1]]
        first, last = ceil_day(low), floor_day(high)
        if not days or first >= last:
            out.hours = [(low, high)]
        else:
            out.days = (first, last)
            out.hours = [span for span in ((low, first), (last, high)) if span[0] < span[1]]
    for a, b in partial:
        start, end = ceil_five(a), (ceil_five(b) if open_end and b == until else floor_five(b))
        if fives_from is None or a < fives_from or start >= end:
            out.raw.append((a, b))
            continue
        out.fives.append((start, end))
        out.raw.extend(span for span in ((a, start), (end, b)) if span[0] < span[1])
    return out
