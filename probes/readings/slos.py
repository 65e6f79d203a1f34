"""Objectives as every page, the API, the CSV, /metrics, `slo_check` and the burn-rate alerts read them.

Facade (an objective, a time; typed rows out):
    objective_rows(now, ids=None, cells=False)  each objective: attainment and budget over its window, burn
                            over BURN_WINDOWS, projected exhaustion, status [, per target x region and per region]
                            -> [ObjectiveRow]
    objective_row(id, now, cells=True)           one of them, or None
    counts_in(objective_ids, windows, by=...)    exact counts per objective x window [x target x region]
    slo_history.goodput(id, since, until, bucket)   calls per hour or day [x region] -> [GoodputRow]
    slo_history.burn_down(id, now)               the budget left after each hour of the window -> [BurnDownPoint]
    report(id, since, until)                     the SLA report's numbers (the page, the CSV and the API)
                            -> Report (slo_report.py)

Counting is exact at any edge: a window's whole days are read from the day counts (SLODayCount), its other whole
hours from the hour counts (SLOHourCount), the whole five minutes of its partial hours in the last hours from the
five-minute counts (SLOFiveMinuteCount), what is left at either end (under five minutes, or older partial hours)
from raw rows and missed runs, classified by the same SQL (probes.slos.classify); and the measurements the counter
has not counted yet (probes.slos.counting) are classified in the same snapshot. So a 5-minute burn and a 30-day
attainment are counted alike, and neither waits for the counter.

The figures, one definition:
- eligible = good + bad (excluded calls, in silences the objective excludes, are outside); missed runs are bad;
- attainment = good / eligible; the budget allowed = (1 - objective) x eligible calls, used = bad, remaining =
  allowed - used, and remaining as a share of allowed (negative once overspent);
- burn rate over a window = (bad / eligible) / (1 - objective): 1 spends the budget in exactly the objective's
  window, 14.4 spends 2 % of 30 days' budget in an hour;
- with a mix, each region's share weighs its own bad share: bad_share = sum(w_r x bad_r / eligible_r) over the
  regions with calls (shares renormalised over them), attainment = 1 - bad_share; the budget in calls is
  bad_share x eligible;
- projected exhaustion: the remaining share lasts remaining x window / burn at the last 24 hours' burn rate;
- windows of a day or more (24 h, 3 d and the objective's own) start at the first whole hour inside them
  (reading_start); a window ending now reads its current day (or hour, or five minutes, when it starts inside
  them) from that count, which holds the calls so far; so the raw rows read are the few minutes before the first
  whole five minutes of the windows under a day;
- status: disabled, rebuilding (counts not yet exact), no_data, exhausted (nothing remaining), page or ticket (a
  burn-rate alert's condition holds: BURN_ALERTS), else ok.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from django.db import connection, transaction

from probes.slos.classify import (
    BAD,
    DEGRADED,
    EXCLUDED,
    GOOD,
    MISSED,
    call_class_sql,
    covering_sql,
    in_silence_sql,
    missed_class_sql,
)
from probes.slot_time import SLOT_EARLY, SLOT_LATE

if TYPE_CHECKING:
    from probes.models import ServiceLevelObjective

HOUR = timedelta(hours=1)

# The burn-rate windows, shortest first: read for every objective by its pages, /metrics and slo_check.
BURN_WINDOWS: tuple[tuple[str, timedelta], ...] = (
    ("5m", timedelta(minutes=5)),
    ("30m", timedelta(minutes=30)),
    ("1h", timedelta(hours=1)),
    ("6h", timedelta(hours=6)),
    ("24h", timedelta(hours=24)),
    ("3d", timedelta(days=3)),
)
BURN_WINDOW = dict(BURN_WINDOWS)
# The burn rate a projection of exhaustion assumes.
PROJECTION_WINDOW = "24h"

Severity = Literal["page", "ticket"]


@dataclass(frozen=True)
class BurnAlert:
    """The Google SRE workbook's multiwindow, multi-burn-rate alert: it holds when the burn rate over both the
    long and the short window is above factor (the short window makes it stop soon after the burning stops)."""

    severity: Severity
    factor: float
    long: str
    short: str

    def holds(self, burn: Mapping[str, float | None]) -> bool:
        long, short = burn.get(self.long), burn.get(self.short)
        return long is not None and short is not None and long > self.factor and short > self.factor


# Strongest first: the first that holds is the objective's alert.
BURN_ALERTS: tuple[BurnAlert, ...] = (
    BurnAlert("page", 14.4, "1h", "5m"),
    BurnAlert("page", 6.0, "6h", "30m"),
    BurnAlert("ticket", 1.0, "3d", "6h"),
)

STATUSES = ("disabled", "rebuilding", "no_data", "exhausted", "page", "ticket", "ok")
Status = Literal["disabled", "rebuilding", "no_data", "exhausted", "page", "ticket", "ok"]


def alert_for(burn: Mapping[str, float | None]) -> BurnAlert | None:
    """The strongest burn-rate alert whose condition holds for these burn rates, or None."""
    return next((alert for alert in BURN_ALERTS if alert.holds(burn)), None)


class Counts(NamedTuple):
    """A tuple rather than a frozen dataclass: a month of 20 objectives makes thousands of them per read, and a
    frozen dataclass sets each field through object.__setattr__."""

    good: int = 0  # degraded included
    degraded: int = 0
    bad: int = 0  # missed included
    missed: int = 0
    excluded: int = 0
    bad_minutes: int = 0  # minutes holding a bad call (whole hours only: see report)

    @property
    def eligible(self) -> int:
        return self.good + self.bad

    def __add__(self, other: object) -> Counts:
        if not isinstance(other, Counts):
            return NotImplemented
        return Counts(
            self.good + other.good,
            self.degraded + other.degraded,
            self.bad + other.bad,
            self.missed + other.missed,
            self.excluded + other.excluded,
            self.bad_minutes + other.bad_minutes,
        )


ZERO = Counts()


@dataclass(frozen=True)
class Budget:
    """Attainment and error budget of some calls against an objective (a ratio, e.g. 0.99)."""

    objective: float
    counts: Counts
    bad_share: float | None  # bad / eligible, or the mix's weighted bad share; None without eligible calls

    @property
    def attainment(self) -> float | None:
        return None if self.bad_share is None else 1.0 - self.bad_share

    @property
    def allowed(self) -> float:
        """Bad calls the objective allows among these eligible calls."""
        return (1.0 - self.objective) * self.counts.eligible

    @property
    def used(self) -> float:
        """Bad calls spent: the count itself, or with a mix the weighted share of the eligible calls."""
        return 0.0 if self.bad_share is None else self.bad_share * self.counts.eligible

    @property
    def remaining(self) -> float:
        return self.allowed - self.used

    @property
    def remaining_ratio(self) -> float | None:
        """The budget left as a share of the budget allowed: 1 untouched, 0 spent, negative overspent."""
        if self.bad_share is None:
            return None
        return 1.0 - self.bad_share / (1.0 - self.objective)

    @property
    def used_ratio(self) -> float | None:
        """The budget spent as a share of the budget allowed (1 - remaining_ratio): above 1 once overspent.
        What the SLA report, its CSV and the API call budget_used_ratio."""
        if self.bad_share is None:
            return None
        return self.bad_share / (1.0 - self.objective)

    @property
    def burn_rate(self) -> float | None:
        """How fast these calls spend the budget: 1 spends it in exactly the objective's window."""
        return None if self.bad_share is None else self.bad_share / (1.0 - self.objective)


@dataclass(frozen=True)
class CellRow:
    """One target x region (or, with target_id None, one region over every target) of an objective."""

    target_id: int | None
    target_name: str
    region_id: int
    region_slug: str
    region_name: str
    share: float | None  # the region's share of the mix (normalised), None without a mix
    budget: Budget  # over the objective's window
    burn: dict[str, float | None]  # per BURN_WINDOWS label


@dataclass(frozen=True)
class ObjectiveRow:
    id: int
    name: str
    enabled: bool
    objective: float  # a ratio: 0.99 for 99 %
    objective_percent: float
    window: str  # rolling_28d, rolling_30d or calendar_month
    window_label: str
    since: datetime
    until: datetime
    exact_since: datetime | None  # the counts are exact from this hour; None while rebuilding
    has_mix: bool
    thresholds: dict[str, float | None]  # ttft, tpot, total, degraded_ttft (ms)
    exclude_silences: bool
    budget: Budget  # pooled, or weighted by the mix
    burn: dict[str, float | None]
    exhaustion: datetime | None  # projected at the PROJECTION_WINDOW burn; None when not burning or spent
    status: Status
    alert: BurnAlert | None
    cells: list[CellRow] = field(default_factory=list)  # per target x region (cells=True)
    regions: list[CellRow] = field(default_factory=list)  # per region over its targets (cells=True)

    @property
    def counting(self) -> bool:
        return self.exact_since is not None


@dataclass(frozen=True)
class GoodputRow:
    bucket: datetime  # the hour or day (UTC) the calls' slots fall in
    region_id: int | None  # None: every region
    region_slug: str
    counts: Counts
    hours: float  # the bucket's length in hours, for goodput as good calls per hour

    @property
    def attainment(self) -> float | None:
        return self.counts.good / self.counts.eligible if self.counts.eligible else None

    @property
    def goodput_per_hour(self) -> float:
        return self.counts.good / self.hours


@dataclass(frozen=True)
class BurnDownPoint:
    hour: datetime  # the end of the hour: the budget left once its calls were counted
    remaining_ratio: float | None


# ----- windows -----------------------------------------------------------------------------------------------


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


def _split(
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


# ----- counting ----------------------------------------------------------------------------------------------

Key = tuple  # (objective_id, label[, target_id, region_id])
# What counts_in sums over: each target x region, each region (its targets together), or the objective.
By = Literal["cell", "region", "objective"]


def _cell_sql(alias: str, by: By) -> str:
    """The (target_id, region_id) columns a count is keyed by: 0 for the target when by region, NULL for both when
    by objective."""
    if by == "cell":
        return f"{alias}.target_id, {alias}.region_id"
    return f"0, {alias}.region_id" if by == "region" else "NULL::int, NULL::int"


def _tables() -> dict[str, str]:
    from probes.models import (
        Measurement,
        MissedRun,
        ServiceLevelObjective,
        SLODayCount,
        SLOFiveMinuteCount,
        SLOHourCount,
    )

    return {
        "objective": ServiceLevelObjective._meta.db_table,
        "counts": SLOHourCount._meta.db_table,
        "day_counts": SLODayCount._meta.db_table,
        "five_counts": SLOFiveMinuteCount._meta.db_table,
        "measured": Measurement._meta.db_table,
        "missed": MissedRun._meta.db_table,
    }


def _sums(cls: str = "cls", n: str = "1") -> str:
    return (
        f"coalesce(sum({n}) FILTER (WHERE {cls} IN ('{GOOD}', '{DEGRADED}')), 0), "
        f"coalesce(sum({n}) FILTER (WHERE {cls} = '{DEGRADED}'), 0), "
        f"coalesce(sum({n}) FILTER (WHERE {cls} IN ('{BAD}', '{MISSED}')), 0), "
        f"coalesce(sum({n}) FILTER (WHERE {cls} = '{MISSED}'), 0), "
        f"coalesce(sum({n}) FILTER (WHERE {cls} = '{EXCLUDED}'), 0)"
    )


def counts_in(
    objective_ids: Sequence[int],
    windows: Mapping[str, tuple[datetime, datetime]],
    *,
    by_cell: bool = True,
    by_region: bool = False,
    minutes: bool = False,
) -> dict[Key, Counts]:
    """Exact counts of each objective in each window [since, until), keyed (objective_id, label, target_id,
    region_id), or (objective_id, label) with by_cell False, or (objective_id, label, 0, region_id) with by_region
    (every target of a region together: what an objective's own figures need). Five statements whatever the
    number of windows, in one snapshot: the day counts of their whole days, the hour counts of their other whole
    hours (a window ending at the present reads its current day's or hour's count whole), the five-minute counts
    of the recent partial hours' whole five minutes, the measurements above the counting position in all of those
    (not counted yet: probes.slos.counting) and the raw rows and missed runs of what is left, classified.
    bad_minutes is counted only with minutes (the days are then read from the hours, whose masks hold them) and
    from the counted calls of whole hours only (a partial hour's minutes are not counted)."""
    if not objective_ids or not windows:
        return {}
    by: By = "region" if by_region else "cell" if by_cell else "objective"
    if connection.in_atomic_block:
        return _counts_in(objective_ids, windows, by, minutes)
    # One snapshot for the counts, the counting position and the rows above it: in another, a counting pass
    # committed in between would have its rows read twice, or not at all.
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _counts_in(objective_ids, windows, by, minutes)


def _counts_in(
    objective_ids: Sequence[int], windows: Mapping[str, tuple[datetime, datetime]], by: By, minutes: bool
) -> dict[Key, Counts]:
    t = _tables()
    days: list[tuple[str, datetime, datetime]] = []
    hours: list[tuple[str, datetime, datetime]] = []
    raw: list[tuple[str, datetime, datetime]] = []
    clock = datetime.now(UTC)
    present = clock - PRESENT_SLACK
    fives_from = floor_hour(clock) - timedelta(hours=FIVE_MINUTES_READ_HOURS)
    fives: list[tuple[str, datetime, datetime]] = []
    for label, (since, until) in windows.items():
        split = _split(since, until, days=not minutes, open_end=until >= present, fives_from=fives_from)
        if split.days:
            days.append((label, *split.days))
        hours.extend((label, a, b) for a, b in split.hours)
        fives.extend((label, a, b) for a, b in split.fives)
        raw.extend((label, a, b) for a, b in split.raw)
    # Summed as plain integers and made Counts once per key: a month of 20 objectives is thousands of rows.
    out: dict[Key, list[int]] = {}

    def add(rows: Iterable[Sequence[Any]]) -> None:
        for objective_id, label, target_id, region_id, *numbers in rows:
            key = (objective_id, label) if by == "objective" else (objective_id, label, target_id, region_id)
            got = out.get(key)
            if got is None:
                out[key] = [int(n) for n in numbers]
            else:
                for i, n in enumerate(numbers):
                    got[i] += int(n)

    cell = _cell_sql("c", by)
    sums = (
        "sum(c.good) AS good, sum(c.degraded) AS degraded, sum(c.bad) AS bad, sum(c.missed) AS missed, "
        "sum(c.excluded) AS excluded"
    )
    with connection.cursor() as cur:
        for spans, table, column, mask in (
            (days, t["day_counts"], "day", "0"),
            (hours, t["counts"], "hour", "sum(bit_count(c.bad_minutes::bit(64)))" if minutes else "0"),
            (fives, t["five_counts"], "start", "0"),
        ):
            if not spans:
                continue
            # Each row once, however many spans hold it (the windows ending now share their last hours): one
            # index range scan of (objective, hour|day) per merged piece, with its bounds as constants (a join to
            # a VALUES list of spans is planned as a scan of the whole table), summed per interval between the
            # spans' edges, then per span.
            pieces = _merged([(a, b) for _, a, b in spans])
            edges, in_span = _intervals(spans)
            scans = " UNION ALL ".join(
                [f"SELECT * FROM {table} x WHERE x.objective_id = ANY(%s) AND x.{column} >= %s AND x.{column} < %s"]
                * len(pieces)
            )
            cur.execute(
                f"WITH w(label, piece) AS (VALUES {', '.join(['(%s, %s::int)'] * len(in_span))}), "
                f"a AS (SELECT c.objective_id, c.target_id, c.region_id, width_bucket(c.{column}, %s::timestamptz[]) "
                f"AS piece, {sums}, {mask} AS mask FROM ({scans}) AS c GROUP BY 1, 2, 3, 4) "
                f"SELECT a.objective_id, w.label, {cell.replace('c.', 'a.')}, sum(a.good)::bigint, "
                "sum(a.degraded)::bigint, sum(a.bad)::bigint, sum(a.missed)::bigint, sum(a.excluded)::bigint, "
                "sum(a.mask)::bigint FROM a JOIN w ON w.piece = a.piece "
                "GROUP BY 1, 2, 3, 4",
                [
                    *(v for row in in_span for v in row),
                    edges,
                    *(v for a, b in pieces for v in (list(objective_ids), a, b)),
                ],
            )
            add(cur.fetchall())
        counted = [*days, *hours, *fives]
        if counted:
            add(_uncounted_counts(cur, objective_ids, counted, by))
        if raw:
            add(_raw_counts(cur, objective_ids, raw, by))
    return {key: Counts(*numbers) for key, numbers in out.items()}


def _intervals(spans: list[tuple[str, datetime, datetime]]) -> tuple[list[datetime], list[tuple[str, int]]]:
    """The spans' edges in order, which cut time into intervals each wholly inside or outside every span; and
    (label, interval) for each interval inside each span, interval i being [edges[i - 1], edges[i]): the number
    width_bucket(t, edges) gives a time in it."""
    edges = sorted({edge for _, a, b in spans for edge in (a, b)})
    return edges, [(label, i + 1) for label, a, b in spans for i, edge in enumerate(edges[:-1]) if a <= edge < b]


def _merged(spans: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """The union of [since, until) spans as disjoint spans, in order."""
    out: list[tuple[datetime, datetime]] = []
    for since, until in sorted(spans):
        if out and since <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], until))
        else:
            out.append((since, until))
    return out


def _raw_counts(
    cur: Any, objective_ids: Sequence[int], spans: list[tuple[str, datetime, datetime]], by: By
) -> list[tuple[Any, ...]]:
    """The classified raw rows and missed runs (without a measurement) whose slot lies in each span."""
    t = _tables()
    # Only the rows inside the spans: a 30-day window's partial first hour and the partial last hour must not
    # read the 30 days between them (the spans, merged where they overlap, are a few hours at most).
    pieces = _merged([(a, b) for _, a, b in spans])
    # started_at bounds from the slot rule (probes.slot_time) let the started_at indexes find the rows; the
    # scheduled_for bounds prune the day partitions. One SELECT per piece, joined by UNION ALL: each prunes by its
    # own bounds (PostgreSQL does not prune by an OR of the pieces' bounds in one WHERE).
    calls = " UNION ALL ".join(
        [
            f"SELECT {_call_columns()} FROM {t['measured']} m WHERE m.scheduled_for >= %s AND m.scheduled_for < %s "
            "AND m.started_at >= %s AND m.started_at < %s"
        ]
        * len(pieces)
    )
    # The piece's bounds again inside NOT EXISTS: without them the planner probes every day partition's index for
    # each missed run, and for that cost starts parallel workers, whose start costs more than such a read.
    missed = " UNION ALL ".join(
        [
            f"SELECT mr.target_id, mr.region_id, mr.scheduled_for, 1 AS n FROM {t['missed']} mr "
            "WHERE mr.scheduled_for >= %s AND mr.scheduled_for < %s AND NOT EXISTS "
            f"(SELECT 1 FROM {t['measured']} m WHERE m.probe_id = mr.probe_id AND m.region_id = mr.region_id "
            "AND m.scheduled_for = mr.scheduled_for AND m.scheduled_for >= %s AND m.scheduled_for < %s)"
        ]
        * len(pieces)
    )
    params = [
        *(v for a, b in pieces for v in (a, b, a - SLOT_EARLY, b + SLOT_LATE)),
        *(v for a, b in pieces for v in (a, b, a, b)),
    ]
    return _classified(cur, objective_ids, spans, by, calls, missed, params)


def _uncounted_counts(
    cur: Any, objective_ids: Sequence[int], spans: list[tuple[str, datetime, datetime]], by: By
) -> list[tuple[Any, ...]]:
    """The measurements above the counting position (probes.slos.counting) whose slot lies in each span,
    classified for the objectives current in this snapshot, and the missed runs they replace taken back: what the
    counts of those spans will hold once the counter has counted them. Under a second's or a burst's worth of rows
    when the counter keeps up; found by each day partition's id index."""
    from probes.slos.counting import counted_sql

    t = _tables()
    # The position as a constant, read in this snapshot: as a subquery its value is unknown when the statement is
    # planned, and a third of every day partition is assumed above it (a scan of every row). Nothing to read when
    # no id has been drawn above it.
    cur.execute(
        f"SELECT {counted_sql()}, coalesce(pg_sequence_last_value(pg_get_serial_sequence(%s, 'id')::regclass), 0)",
        [t["measured"]],
    )
    through, drawn = cur.fetchone()
    if drawn <= through:
        return []
    low, high = min(a for _, a, _ in spans), max(b for _, _, b in spans)
    calls = (
        f"SELECT {_call_columns()}, m.probe_id FROM {t['measured']} m WHERE m.id > %s "
        "AND m.scheduled_for >= %s AND m.scheduled_for < %s"
    )
    # Taken back: each counted missed run of a slot now measured (the counter takes it back as it counts the row).
    missed = (
        "SELECT mr.target_id, mr.region_id, mr.scheduled_for, -1 AS n FROM calls c "
        f"JOIN {t['missed']} mr ON mr.probe_id = c.probe_id AND mr.region_id = c.region_id "
        "AND mr.scheduled_for = c.scheduled_for"
    )
    return _classified(cur, objective_ids, spans, by, calls, missed, [through, low, high], current=True)


def _call_columns() -> str:
    """A measurement's columns the classifier reads, and whether its slot lies in a silence (judged once a call)."""
    return (
        "m.target_id, m.region_id, m.scheduled_for, m.outcome, m.ttft_ms, m.total_ms, m.output_tokens, "
        f"{in_silence_sql('m')} AS in_silence"
    )


def _classified(
    cur: Any,
    objective_ids: Sequence[int],
    spans: list[tuple[str, datetime, datetime]],
    by: By,
    calls: str,
    missed: str,
    params: list[Any],
    current: bool = False,
) -> list[tuple[Any, ...]]:
    """Counts per objective x span [x cell] of `calls` (a SELECT of _call_columns()) and `missed` (a SELECT of
    target_id, region_id, scheduled_for and n, 1 or -1: it may name the CTE `calls`), classified for each objective
    of objective_ids covering them (and current, with current). params: calls' then missed's."""
    t = _tables()
    # Summed per interval between the spans' edges first, then per span, rather than every call joined to every
    # span holding it.
    edges, in_span = _intervals(spans)
    values = ", ".join(["(%s, %s::int)"] * len(in_span))
    cell = _cell_sql("a", by)
    which = "o.id = ANY(%s)" + (" AND o.enabled AND o.counted_condition <> ''" if current else "")
    sql = (
        f"WITH w(label, piece) AS (VALUES {values}), "
        f"calls AS ({calls}), missed AS ({missed}), "
        "pairs AS (SELECT DISTINCT target_id, region_id FROM calls UNION SELECT DISTINCT target_id, region_id "
        "FROM missed), "
        # Each covered pair with its objective's row, so the calls join one small table rather than look their
        # objective up call by call; a call's silence is judged once, not once per objective covering it.
        "cover AS (SELECT cv.target_id AS covered_target_id, cv.region_id AS covered_region_id, ob.* "
        f"FROM ({covering_sql('pairs', which)}) cv JOIN {t['objective']} ob ON ob.id = cv.objective_id), "
        f"x AS (SELECT o.id AS objective_id, s.target_id, s.region_id, s.scheduled_for, "
        f"{call_class_sql('s', 'o', 's.in_silence')} AS cls, 1 AS n FROM calls s JOIN cover o "
        "ON o.covered_target_id = s.target_id AND o.covered_region_id = s.region_id "
        f"UNION ALL SELECT o.id, s.target_id, s.region_id, s.scheduled_for, {missed_class_sql('s', 'o')}, s.n "
        "FROM missed s JOIN cover o ON o.covered_target_id = s.target_id AND o.covered_region_id = s.region_id), "
        "a(objective_id, target_id, region_id, piece, good, degraded, bad, missed, excluded) AS ("
        "SELECT x.objective_id, x.target_id, x.region_id, width_bucket(x.scheduled_for, %s::timestamptz[]), "
        f"{_sums('x.cls', 'x.n')} FROM x GROUP BY 1, 2, 3, 4) "
        f"SELECT a.objective_id, w.label, {cell}, sum(a.good)::bigint, sum(a.degraded)::bigint, sum(a.bad)::bigint, "
        "sum(a.missed)::bigint, sum(a.excluded)::bigint, 0 FROM a JOIN w ON w.piece = a.piece GROUP BY 1, 2, 3, 4"
    )
    cur.execute(sql, [*(v for row in in_span for v in row), *params, list(objective_ids), edges])
    return list(cur.fetchall())


# ----- figures -----------------------------------------------------------------------------------------------


def mix_weights(mix: Mapping[str, float], slugs: Mapping[int, str]) -> dict[int, float]:
    """The mix's shares by region id (regions of the mix that exist), normalised to add up to 1."""
    by_slug = {slug: rid for rid, slug in slugs.items()}
    shares = {by_slug[slug]: float(share) for slug, share in mix.items() if slug in by_slug and float(share) > 0}
    total = sum(shares.values())
    return {rid: share / total for rid, share in shares.items()} if total else {}


def budget_of(objective: float, per_region: Mapping[int, Counts], weights: Mapping[int, float] | None = None) -> Budget:
    """The budget of these calls: pooled, or with weights (region id -> share) each region's bad share weighed
    by its share, renormalised over the regions with eligible calls."""
    total = sum(per_region.values(), ZERO)
    if not total.eligible:
        return Budget(objective, total, None)
    if not weights:
        return Budget(objective, total, total.bad / total.eligible)
    present = {rid: w for rid, w in weights.items() if per_region.get(rid, ZERO).eligible}
    weight = sum(present.values())
    if not weight:
        return Budget(objective, total, None)
    bad_share = sum(w / weight * per_region[rid].bad / per_region[rid].eligible for rid, w in present.items())
    return Budget(objective, total, bad_share)


def _burn(objective: float, per_region: Mapping[int, Counts], weights: Mapping[int, float] | None) -> float | None:
    return budget_of(objective, per_region, weights).burn_rate


def _status(o: ServiceLevelObjective, budget: Budget, alert: BurnAlert | None) -> Status:
    if not o.enabled:
        return "disabled"
    if not o.counted_condition:
        return "rebuilding"
    if budget.remaining_ratio is None:
        return "no_data"
    if budget.remaining_ratio <= 0:
        return "exhausted"
    if alert is not None:
        return alert.severity
    return "ok"


def _objectives(ids: Iterable[int] | None) -> list[ServiceLevelObjective]:
    from probes.models import ServiceLevelObjective

    objectives = ServiceLevelObjective.objects.order_by("name")
    if ids is not None:
        objectives = objectives.filter(id__in=list(ids))
    return list(objectives)


def objective_rows(
    now: datetime | None = None, ids: Iterable[int] | None = None, *, cells: bool = False
) -> list[ObjectiveRow]:
    """Every objective (or those of ids), by name, with its figures as of now (see the module)."""
    from probes.models import Region, Target

    now = now or datetime.now(UTC)
    objectives = _objectives(ids)
    if not objectives:
        return []
    counting = [o.id for o in objectives if o.enabled and o.counted_condition]
    windows: dict[str, tuple[datetime, datetime]] = {
        label: (reading_start(now - span, span), now) for label, span in BURN_WINDOWS
    }
    for kind in {o.window for o in objectives}:
        since, until = window_of(kind, now)
        windows[kind] = (reading_start(since, until - since), until)
    counts = counts_in(counting, windows, by_region=not cells)
    regions = {r["id"]: r for r in Region.objects.values("id", "slug", "name")}
    slugs = {rid: r["slug"] for rid, r in regions.items()}
    target_names = dict(Target.objects.values_list("id", "name")) if cells else {}
    by_objective: dict[int, dict[str, dict[tuple[int, int], Counts]]] = defaultdict(lambda: defaultdict(dict))
    for (objective_id, label, target_id, region_id), value in counts.items():
        by_objective[objective_id][label][(target_id, region_id)] = value
    rows = []
    for o in objectives:
        rows.append(_row(o, now, by_objective.get(o.id, {}), slugs, regions, target_names, cells))
    return rows


def objective_row(objective_id: int, now: datetime | None = None, *, cells: bool = True) -> ObjectiveRow | None:
    """One objective's figures (with its cells), or None when there is no such objective."""
    rows = objective_rows(now, [objective_id], cells=cells)
    return rows[0] if rows else None


def _by_region(cell_counts: Mapping[tuple[int, int], Counts]) -> dict[int, Counts]:
    regions: dict[int, Counts] = defaultdict(lambda: ZERO)
    for (_, region_id), value in cell_counts.items():
        regions[region_id] = regions[region_id] + value
    return dict(regions)


def _row(
    o: ServiceLevelObjective,
    now: datetime,
    counts: Mapping[str, Mapping[tuple[int, int], Counts]],
    slugs: Mapping[int, str],
    regions: Mapping[int, Mapping[str, Any]],
    target_names: Mapping[int, str],
    cells: bool,
) -> ObjectiveRow:
    objective = float(o.objective_percent) / 100.0
    weights = mix_weights(o.mix, slugs) if o.mix else None
    in_window = counts.get(o.window, {})
    budget = budget_of(objective, _by_region(in_window), weights)
    burn = {label: _burn(objective, _by_region(counts.get(label, {})), weights) for label, _ in BURN_WINDOWS}
    current = o.enabled and bool(o.counted_condition)
    alert = alert_for(burn) if current else None
    exhaustion = None
    rate = burn.get(PROJECTION_WINDOW)
    if current and budget.remaining_ratio is not None and budget.remaining_ratio > 0 and rate:
        exhaustion = now + window_length(o.window, now) * (budget.remaining_ratio / rate)
    cell_rows: list[CellRow] = []
    region_rows: list[CellRow] = []
    if cells:
        keys: set[tuple[int, int]] = set()
        for label_counts in counts.values():
            keys.update(label_counts)
        for target_id, region_id in sorted(keys, key=lambda k: (target_names.get(k[0], ""), slugs.get(k[1], ""))):
            cell_rows.append(
                _cell(
                    objective, o.window, target_id, target_names.get(target_id, ""), region_id, regions, weights, counts
                )
            )
        for region_id in sorted({k[1] for k in keys}, key=lambda rid: slugs.get(rid, "")):
            regional = {
                label: {(0, region_id): sum((v for k, v in lc.items() if k[1] == region_id), ZERO)}
                for label, lc in counts.items()
            }
            region_rows.append(_cell(objective, o.window, None, "", region_id, regions, weights, regional))
    return ObjectiveRow(
        id=o.id,
        name=o.name,
        enabled=o.enabled,
        objective=objective,
        objective_percent=float(o.objective_percent),
        window=o.window,
        window_label=str(o.get_window_display()),
        since=reading_start(window_of(o.window, now)[0], now - window_of(o.window, now)[0]),
        until=now,
        exact_since=o.exact_since if current else None,
        has_mix=bool(weights),
        thresholds={
            "ttft": o.ttft_threshold_ms,
            "tpot": o.tpot_threshold_ms,
            "total": o.total_threshold_ms,
            "degraded_ttft": o.degraded_ttft_threshold_ms,
        },
        exclude_silences=o.exclude_silences,
        budget=budget,
        burn=burn,
        exhaustion=exhaustion,
        status=_status(o, budget, alert),
        alert=alert,
        cells=cell_rows,
        regions=region_rows,
    )


def _cell(
    objective: float,
    window: str,
    target_id: int | None,
    target_name: str,
    region_id: int,
    regions: Mapping[int, Mapping[str, Any]],
    weights: Mapping[int, float] | None,
    counts: Mapping[str, Mapping[tuple[int, int], Counts]],
) -> CellRow:
    key = (target_id if target_id is not None else 0, region_id)
    region = regions.get(region_id, {"slug": "", "name": ""})
    in_window = counts.get(window, {}).get(key, ZERO)
    return CellRow(
        target_id=target_id,
        target_name=target_name,
        region_id=region_id,
        region_slug=region["slug"],
        region_name=region["name"],
        share=(weights or {}).get(region_id) if weights else None,
        budget=budget_of(objective, {region_id: in_window}),
        burn={
            label: budget_of(objective, {region_id: counts.get(label, {}).get(key, ZERO)}).burn_rate
            for label, _ in BURN_WINDOWS
        },
    )
