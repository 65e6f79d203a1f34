"""Exact counts of objectives' calls in any windows (counts_in): what every reading of probes.readings.slos,
slo_history and slo_report sums. How a window is cut into the kinds of counts is probes.readings.slo_time's
split_window; the counts themselves are written by probes.slos (classify, counting, rebuild)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, NamedTuple

from django.db import connection, transaction

from probes.readings.slo_time import FIVE_MINUTES_READ_HOURS, PRESENT_SLACK, floor_hour, split_window
from probes.slos.classify import (
    call_class_sql,
    class_sums,
    covering_sql,
    in_silence_sql,
    missed_class_sql,
)
from probes.slos.counting import counted_sql
from probes.slot_time import SLOT_EARLY, SLOT_LATE


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


Key = tuple  # (objective_id, label[, target_id, region_id])
# What counts_in sums over: each target x region, each region (its targets together), or the objective.
By = Literal["cell", "region", "objective"]


def _cell_sql(alias: str, by: By) -> str:
    """The (target_id, region_id) columns a count is keyed by: 0 for the target when by region, NULL for both when
    by objective."""
    if by == "cell":
        return f"{alias}.target_id, {alias}.region_id"
    return f"0, {alias}.region_id" if by == "region" else "NULL::int, NULL::int"


def tables() -> dict[str, str]:
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
    t = tables()
    days: list[tuple[str, datetime, datetime]] = []
    hours: list[tuple[str, datetime, datetime]] = []
    raw: list[tuple[str, datetime, datetime]] = []
    clock = datetime.now(UTC)
    present = clock - PRESENT_SLACK
    fives_from = floor_hour(clock) - timedelta(hours=FIVE_MINUTES_READ_HOURS)
    fives: list[tuple[str, datetime, datetime]] = []
    for label, (since, until) in windows.items():
        split = split_window(since, until, days=not minutes, open_end=until >= present, fives_from=fives_from)
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
    t = tables()
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
    t = tables()
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
    t = tables()
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
        f"{', '.join(class_sums('x.cls', 'x.n'))} FROM x GROUP BY 1, 2, 3, 4) "
        f"SELECT a.objective_id, w.label, {cell}, sum(a.good)::bigint, sum(a.degraded)::bigint, sum(a.bad)::bigint, "
        "sum(a.missed)::bigint, sum(a.excluded)::bigint, 0 FROM a JOIN w ON w.piece = a.piece GROUP BY 1, 2, 3, 4"
    )
    cur.execute(sql, [*(v for row in in_span for v in row), *params, list(objective_ids), edges])
    return list(cur.fetchall())
