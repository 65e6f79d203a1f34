"""Where each part of a window is read from: hourly rollups, series or
region rollup blocks, or raw rows (Coverage), and how a time series is cut
into buckets.

Marked hours come from rollups, and everything else (the partial hours at
either end, hours not rolled up yet) from raw rows, so a reading is always
complete. A block of rollups covers its hours only when all of them are
marked, because a late row unmarks its hour without touching the blocks
over it: the series blocks of complete days (series_tiles over
complete_days) and inside a day (hour_tiles), and, for a reading of every
target grouped by region, the region blocks (probes.rollups.ladder, tiled by
ladder_tiles).

An unmarked hour starting inside the window (the current hour, rebuilt
every few minutes, or one a late row reached) whose last rebuild recorded a
cut (probes.models.HourCut) is read from that rebuild's hourly rollups,
which count its rows up to the cut, plus its raw rows above the cut (the
tail): the current hour is the largest stretch of raw rows a dashboard
read meets, and it used to be read raw on every request. Only when every row those rollups count lies inside
the window (HourCut.newest); otherwise the hour is read raw.

At the other end, a window starting before the middle of a marked hour reads
that hour whole from its rollups less its raw rows before the window
(coverage(head=True), for read_window and the time series, which subtract
them; SeriesPlan.minus): so a window's
two edges together cost at most about half an hour of raw rows plus the
current hour's rows stored since its last rebuild, instead of an hour.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.backends.utils import CursorWrapper

from probes.rollups.catalogue import in_use
from probes.rollups.periods import (
    DAY,
    EPOCH,
    GRAINS,
    HOUR,
    SERIES_GRAINS,
    SERIES_HOUR_GRAINS,
    block_start,
    ceil_hour,
    floor_day,
    floor_hour,
)

log = logging.getLogger(__name__)

MINUTE = timedelta(minutes=1)
# Time-series bucket sizes of the preset windows. From 24 h up they are whole
# hours, so every bucket made of marked hours is merged from hourly rollups:
# 30-minute buckets at 24 h could only be read from raw rows, the whole day of
# them.
BUCKETS = {
    "15m": timedelta(minutes=1),
    "1h": timedelta(minutes=2),
    "24h": timedelta(hours=1),
    "7d": timedelta(hours=3),
    "30d": timedelta(hours=12),
}
CUSTOM_BUCKETS = 60
# Time buckets are aligned to EPOCH (probes.rollups.periods, imported here
# for the readers), so hour-sized ones start on whole hours and the same
# bucket reads the same rows on every refresh.


def raw_intervals(since: datetime, until: datetime, marked: set[datetime]) -> list[tuple[datetime, datetime]]:
    """The parts of [since, until) not covered by marked hours, merged into
    as few intervals as possible (one range condition each)."""
    intervals: list[tuple[datetime, datetime]] = []
    start = since
    for hour in sorted(marked):
        if hour > start:
            intervals.append((start, hour))
        start = max(start, hour + HOUR)
    if start < until:
        intervals.append((start, until))
    return intervals


@dataclass
class Coverage:
    """Where each part of a window is read from."""

    since: datetime
    until: datetime
    # Marked hours wholly inside the window (a reader's part: those not covered by its blocks).
    hours: list[datetime] = field(default_factory=list)
    # Region rollup blocks (span in hours, start) wholly inside the window,
    # all their hours marked: ladder_tiles.
    blocks: list[tuple[int, datetime]] = field(default_factory=list)
    # Series rollup blocks (span in hours, start) wholly inside the window,
    # all their hours marked, each with its SeriesBlockMark: series_tiles and hour_tiles.
    spans: list[tuple[int, datetime]] = field(default_factory=list)
    # The rest, read from raw rows.
    raw: list[tuple[datetime, datetime]] = field(default_factory=list)
    # built_at of every marked hour inside the window.
    built: dict[datetime, datetime] = field(default_factory=dict)
    # Unmarked hours starting inside the window read from their hourly rollups up to a cut (probes.models.HourCut;
    # the current hour, mostly): hour -> (cut, built_at). Their rows above the cut are in tails.
    partial: dict[datetime, tuple[int, datetime]] = field(default_factory=dict)
    # (start, end, cut): the raw rows of [start, end) with an id above cut, one per partial hour.
    tails: list[tuple[datetime, datetime, int]] = field(default_factory=list)
    # The marked hour the window starts inside, when it is read whole from its hourly rollups less its raw rows
    # before the window (minus): (hour, built_at). See coverage(head=True).
    head: tuple[datetime, datetime] | None = None
    minus: list[tuple[datetime, datetime]] = field(default_factory=list)

    @property
    def covered_hours(self) -> set[datetime]:
        covered = set(self.hours)
        for span, start in (*self.blocks, *self.spans):
            covered.update(start + HOUR * i for i in range(span))
        return covered

    def fingerprint(self, hours: Iterable[datetime] | None = None) -> bytes:
        """Identifies the content of the rollups of some marked hours (all
        covered ones by default). Rollups change only in a rebuild of their
        hours, which stamps each hour's mark with a new built_at in the same
        transaction, and a block's rollups only with one of its hours; so
        equal fingerprints mean equal rollups."""
        digest = hashlib.blake2b(digest_size=16)
        for hour in sorted(self.covered_hours if hours is None else hours):
            digest.update(f"{hour.isoformat()}={self.built[hour].isoformat()};".encode())
        return digest.digest()


def coverage(since: datetime, until: datetime, *, rollups: bool = True, head: bool = False) -> Coverage:
    """Plan a reading of [since, until): which marked hours come from rollups
    (a reader tiles them with blocks: series_tiles, hour_tiles, ladder_tiles),
    and which intervals from raw rows (see the module docstring).
    rollups=False: raw rows only.

    head=True, for a reader that can subtract (read_window, series): when the window
    starts before the middle of a marked hour whose raw rows are all still
    stored, that hour is read whole from its rollups less its raw rows before
    the window (plan.minus), which are fewer than the ones inside it. Counts
    subtract exactly, so the window's first hour costs at most half an hour of
    raw rows instead of up to a whole one."""
    built: dict[datetime, datetime] = {}
    cuts: dict[datetime, tuple[int, datetime]] = {}
    first, end = ceil_hour(since), floor_hour(until)
    start = floor_hour(since)
    head = head and rollups and starts_early(since, until)
    if rollups and (first < end or head):
        built = marks(start if head else first, max(end, first))
    if rollups and first < until:
        cuts = usable_cuts(first, until)
    plan = coverage_of(since, until, built, cuts=cuts)
    if head and head_hour(since, until, built):
        plan.head, plan.minus = (start, built[start]), [(start, since)]
        plan.raw = raw_intervals(since, until, plan.covered_hours | set(plan.partial) | {start})
    return plan


def starts_early(since: datetime, until: datetime) -> bool:
    """Whether [since, until) starts before the middle of its first hour and holds the rest of that hour."""
    start = floor_hour(since)
    return timedelta(0) < since - start < HOUR / 2 and start + HOUR <= until


def head_hour(since: datetime, until: datetime, built: dict[datetime, datetime]) -> datetime | None:
    """The hour a reading of [since, until) reads from its rollups less its raw rows before since (the head
    rule, coverage(head=True)): the window starts early in it (starts_early), it is marked (built: its marks) and
    none of its raw rows before since can have been pruned (raw_kept). None otherwise."""
    start = floor_hour(since)
    if starts_early(since, until) and start in built and raw_kept(start, since):
        return start
    return None


def raw_kept(since: datetime, until: datetime) -> bool:
    """Whether no raw row of [since, until) can have been pruned: each day its slots fall on
    (probes.slot_time) has its own partition, which retention drops only whole, or every slot is
    within LATENCY_RETENTION_DAYS (rows in the default partition are deleted only beyond it)."""
    from probes.partitions import MEASUREMENTS, days_between
    from probes.slot_time import slot_bounds

    low, high = slot_bounds(since, until)
    if low >= datetime.now(UTC) - timedelta(days=settings.LATENCY_RETENTION_DAYS):
        return True
    names = [MEASUREMENTS.day_name(day) for day in days_between(low, high)]
    with connection.cursor() as cur:
        cur.execute("SELECT bool_and(to_regclass(n) IS NOT NULL) FROM unnest(%s::text[]) AS n", [names])
        return bool(cur.fetchone()[0])


# What times read as integers count from (EPOCH is where buckets are aligned, which may differ).
UNIX = datetime(1970, 1, 1, tzinfo=UTC)


def marks(first: datetime, end: datetime) -> dict[datetime, datetime]:
    """The RollupHour marks of the hours in [first, end): hour -> built_at. Read as whole microseconds since
    1970 and made datetimes here: psycopg reads a timestamptz from its text in Python, slowly, and every reading
    of 30 days plans from 720 marks of two timestamps each, most of the planning's time."""
    from probes.models import RollupHour

    with connection.cursor() as cur:
        cur.execute(
            "SELECT (extract(epoch FROM hour) * 1000000)::int8, (extract(epoch FROM built_at) * 1000000)::int8"
            f" FROM {RollupHour._meta.db_table} WHERE hour >= %s AND hour < %s",
            [first, end],
        )
        return {UNIX + timedelta(microseconds=h): UNIX + timedelta(microseconds=b) for h, b in cur.fetchall()}


def usable_cuts(first: datetime, until: datetime) -> dict[datetime, tuple[int, datetime]]:
    """The unmarked hours from `first` on whose hourly rollups count only rows before `until` and whose HourCut
    says which ones: hour -> (cut, built_at). An hour that had ended when built counts rows of its own hour only,
    so it must end by `until`; one still running counts rows up to HourCut.newest."""
    from probes.models import HourCut, RollupHour

    with connection.cursor() as cur:
        cur.execute(
            f"SELECT c.hour, c.cut, c.built_at FROM {HourCut._meta.db_table} c"
            f" WHERE c.hour >= %s AND c.hour < %s AND coalesce(c.newest < %s, c.hour + interval '1 hour' <= %s)"
            f" AND NOT EXISTS (SELECT FROM {RollupHour._meta.db_table} r WHERE r.hour = c.hour)",
            [first, until, until, until],
        )
        return {hour: (cut, built_at) for hour, cut, built_at in cur.fetchall()}


def coverage_of(
    since: datetime,
    until: datetime,
    built: dict[datetime, datetime],
    *,
    cuts: dict[datetime, tuple[int, datetime]] | None = None,
) -> Coverage:
    """coverage() given the marks (hour -> built_at; others outside the
    window are ignored), so a reader planning many windows at once (the
    buckets of regions.csv) reads the marks once; and the usable cuts of
    unmarked hours (usable_cuts), if any."""
    plan = Coverage(since=since, until=until)
    first, end = ceil_hour(since), floor_hour(until)
    if first < end:
        plan.built = {h: at for h, at in built.items() if first <= h < end}
        plan.hours = sorted(plan.built)
    plan.partial = {h: cut for h, cut in (cuts or {}).items() if since <= h < until and h not in plan.built}
    plan.tails = [(h, min(h + HOUR, until), cut) for h, (cut, _) in sorted(plan.partial.items())]
    plan.raw = raw_intervals(since, until, plan.covered_hours | set(plan.partial))
    return plan


def ladder_tiles(since: datetime, until: datetime, marked: Iterable[datetime]) -> list[tuple[int, datetime]]:
    """The region rollup blocks (span in hours, start) that tile the marked
    hours of [since, until): left to right, at each marked hour the largest
    block of the ladder (periods.GRAINS) that starts there, lies inside the
    window and has all its hours marked. The grains nest (each divides the
    next, all aligned to EPOCH), so these are the fewest blocks; an unmarked
    hour is simply left out, and every block holding it is never used."""
    marked = set(marked)
    tiles: list[tuple[int, datetime]] = []
    hour, end = ceil_hour(since), floor_hour(until)
    while hour < end:
        if hour not in marked:
            hour += HOUR
            continue
        for grain in reversed(GRAINS):
            span = HOUR * grain
            if (
                block_start(hour, span) == hour
                and hour + span <= end
                and all(hour + HOUR * i in marked for i in range(grain))
            ):
                tiles.append((grain, hour))
                hour += span
                break
    return tiles


def complete_days(hours: Iterable[datetime]) -> tuple[list[datetime], list[datetime]]:
    """Marked hours of a plan as (the UTC days all 24 of whose hours are among them, the other hours), sorted."""
    hours = sorted(set(hours))
    per_day = Counter(floor_day(h) for h in hours)
    days = sorted(day for day, n in per_day.items() if n == 24)
    whole = set(days)
    return days, [h for h in hours if floor_day(h) not in whole]


def hours_of(days: Iterable[datetime]) -> list[datetime]:
    """Every hour of the days, sorted."""
    return sorted(day + HOUR * i for day in days for i in range(24))


def series_tiles(days: Iterable[datetime]) -> tuple[list[tuple[int, datetime]], list[datetime]]:
    """Complete days of a plan (complete_days) as series rollup blocks and loose days:
    left to right, at each day the largest block of SERIES_GRAINS that starts
    there, holds only complete days and carries a SeriesBlockMark (one is
    read only when it says the block matches its days: series_blocks), else
    the day alone. Returns (blocks as (span in hours, start), days). No blocks while the series_days kind is
    switched off (catalogue.in_use)."""
    if not in_use("series_days"):
        return [], sorted(days)
    return marked_tiles(sorted(days), DAY, SERIES_GRAINS)


def hour_tiles(hours: Iterable[datetime]) -> tuple[list[tuple[int, datetime]], list[datetime]]:
    """Marked hours of a plan (outside its blocks of days) as series rollup blocks inside a day and loose hours:
    left to right, at each hour the largest block of SERIES_HOUR_GRAINS that starts there, holds only hours among
    them and carries a SeriesBlockMark (probes.rollups.hour_blocks), else the hour alone. Returns (blocks as (span
    in hours, start), hours). No blocks while the series_hours kind is switched off (catalogue.in_use)."""
    if not in_use("series_hours"):
        return [], sorted(hours)
    return marked_tiles(sorted(hours), HOUR, SERIES_HOUR_GRAINS)


def marked_tiles(
    units: list[datetime], unit: timedelta, grains: tuple[int, ...]
) -> tuple[list[tuple[int, datetime]], list[datetime]]:
    """series_tiles, hour_tiles and the time series' buckets of named targets (probes.readings.series): sorted
    units (days or hours) as the marked series blocks of `grains` (in hours, finest first) whose every unit is among
    them, largest first from the left, and the units left over."""
    from probes.models import SeriesBlockMark

    if len(units) * unit < HOUR * grains[0]:
        return [], units
    present = set(units)
    built = set(
        SeriesBlockMark.objects.filter(span_hours__in=grains, start__gte=units[0], start__lte=units[-1]).values_list(
            "span_hours", "start"
        )
    )
    blocks: list[tuple[int, datetime]] = []
    loose: list[datetime] = []
    i = 0
    while i < len(units):
        at = units[i]
        for grain in reversed(grains):
            n = HOUR * grain // unit
            if (grain, at) in built and all(at + unit * k in present for k in range(n)):
                blocks.append((grain, at))
                i += n
                break
        else:
            loose.append(at)
            i += 1
    return blocks, loose


@contextmanager
def reporting_reads() -> Iterator[None]:
    """Run reads with PostgreSQL's JIT off, more work_mem than the default and pages
    asked for ahead (settings.LATENCY_READ_IO_CONCURRENCY). Histogram
    merges are estimated expensive enough to trigger JIT, and compiling
    costs more per query than the queries themselves gain from it.
    At the default work_mem a month of the time series' expanded histograms
    is sorted in temporary files, slower than in memory; the setting is per sort or hash and
    local to the read's transaction, as the others are."""
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SET LOCAL jit = off")
            cur.execute("SET LOCAL work_mem = '32MB'")
            _read_ahead(cur)
        yield


class _ReadAhead:
    # Whether the server takes effective_io_concurrency: None until asked. One built without posix_fadvise
    # refuses any value but 0, and then every read keeps the server's setting.
    supported: bool | None = None


def _read_ahead(cur: CursorWrapper) -> None:
    depth = int(settings.LATENCY_READ_IO_CONCURRENCY)
    if not depth or _ReadAhead.supported is False:
        return
    statement = f"SET LOCAL effective_io_concurrency = {depth}"
    if _ReadAhead.supported:
        cur.execute(statement)
        return
    try:
        # A savepoint: a refusal must not abort the read's transaction.
        with transaction.atomic():
            cur.execute(statement)
    except DatabaseError as exc:
        _ReadAhead.supported = False
        log.warning("reads keep the server's effective_io_concurrency: it refused %d (%s)", depth, exc)
    else:
        _ReadAhead.supported = True


# Time buckets ----------------------------------------------------------------------


def bucket_size(window: str, since: datetime, until: datetime) -> timedelta:
    """The time-series step: fixed for the presets; about CUSTOM_BUCKETS
    buckets for a custom window, in whole minutes below an hour and whole
    hours above (hour-sized buckets can be read from hourly rollups)."""
    if window in BUCKETS:
        return BUCKETS[window]
    step = (until - since) / CUSTOM_BUCKETS
    if step < HOUR:
        return max(1, round(step / MINUTE)) * MINUTE
    return max(1, round(step / HOUR)) * HOUR


def bucket_start(when: datetime, size: timedelta) -> datetime:
    return EPOCH + ((when - EPOCH) // size) * size


def merge_intervals(intervals: list[tuple]) -> list[tuple]:
    """Adjacent intervals joined; a tail (start, end, cut) is kept apart, its cut its own."""
    merged: list[tuple] = []
    for interval in intervals:
        if merged and len(interval) == 2 and len(merged[-1]) == 2 and merged[-1][1] == interval[0]:
            merged[-1] = (merged[-1][0], interval[1])
        else:
            merged.append(tuple(interval))
    return merged


@dataclass
class SeriesPlan:
    """Where each time bucket of a series is read from (series_plan)."""

    # Buckets whose part inside the window is whole marked hours: start -> those hours.
    rolled: dict[datetime, list[datetime]] = field(default_factory=dict)
    # Buckets with marked hours and raw parts (the partial first and last
    # ones, or one holding an hour not rolled up yet): start -> (the marked
    # hours, the raw intervals). A partial hour of the plan counts as marked,
    # its tail (start, end, cut) among the raw intervals.
    mixed: dict[datetime, tuple[list[datetime], list[tuple]]] = field(default_factory=dict)
    # The buckets with no marked hour, as raw intervals.
    raw: list[tuple[datetime, datetime]] = field(default_factory=list)
    # Raw rows to take away from the mixed buckets: the plan's head hour's rows before the window (its first
    # bucket holds that hour whole).
    minus: list[tuple[datetime, datetime]] = field(default_factory=list)


def series_plan(since: datetime, until: datetime, size: timedelta, plan: Coverage) -> SeriesPlan:
    """Which time buckets come from hourly rollups alone, which from rollups
    and raw rows, and which from raw rows alone."""
    out = SeriesPlan()
    raw: list[tuple[datetime, datetime]] = []
    start = bucket_start(since, size)
    while start < until:
        a, b = max(start, since), min(start + size, until)
        hours = [h for h in (ceil_hour(a) + HOUR * i for i in range((b - ceil_hour(a)) // HOUR)) if h in plan.built]
        partial = sorted(h for h in plan.partial if a <= h < b)
        head = [plan.head[0]] if plan.head and start <= plan.head[0] < a else []
        hours = sorted([*head, *hours, *partial])
        if not hours:
            raw.append((a, b))
        else:
            rest: list[tuple] = list(raw_intervals(a, b, set(hours)))
            rest += [(h, min(h + HOUR, b), plan.partial[h][0]) for h in partial]
            if rest or head:
                out.mixed[start] = (hours, rest)
            else:
                out.rolled[start] = hours
        start += size
    out.raw = merge_intervals(raw)
    out.minus = list(plan.minus)
    return out
