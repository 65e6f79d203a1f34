"""Building rollups: an hour's HourlyRollup rows from its raw rows, a day's
DailyRollup rows from its hours, and the schedule's job over stale hours.

An hour is "rolled up" when a RollupHour mark says so; the mark is written in
the same transaction as the hour's rollups, only if no ingest stored a row in
the hour while it was being built (probes.rollups.locks), and removed by
ingest when a late measurement lands in that hour. A day's DailyRollup rows are the merge of its
hourly rows, rebuilt in the transaction that leaves all 24 of its hours
marked, so such a day can be read from one row per probe and region
(probes.readings decides what to read, and reads no other day's rows: an
incomplete day's are missing, the current day's until it ends, or stale,
a day a late row unmarked until its hour is rebuilt). Histograms are kept for the metrics
of probes.metrics with histogram=True; percentiles are read from merged
histograms, never averaged.

Hourly rollups are built in SQL, one statement per range of hours (a day at
most: see _hourly_sql), so no raw row is ever read into Python; the Python
builder this replaced is kept as the reference the tests compare it with
(devtools/rollup_reference.py).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from fractions import Fraction

from django.db import connection, transaction

from probes.histogram import BUCKETS, SQL_EDGES
from probes.metrics import HISTOGRAM, PERCENTILES, REGION_CSV
from probes.packed import entries_sql, pack_agg
from probes.rollups import hour_blocks, series_blocks
from probes.rollups.block_merge import JSON_COLUMNS
from probes.rollups.ladder import rebuild_blocks
from probes.rollups.locks import lock_day, lock_series_block, read_versions, take_cut, unchanged_hours
from probes.rollups.periods import (
    DAY,
    HOUR,
    block_start,
    ceil_hour,
    floor_day,
    floor_hour,
    hours_between,
    sample_seconds_sql,
)
from probes.rollups.side_by_side import side_by_side
from probes.significant import cells_sql, names_sql
from probes.slot_time import slot_bounds


def _daily_merge_sql(hourly: str, daily: str) -> str:
    # Merged in SQL: one pass over at most a day's hourly rows per probe and region, no
    # histogram read into Python.
    def merged(column: str) -> str:
        return (
            f"(SELECT {pack_agg('s.bucket', 's.n')} FROM ("
            f"SELECT e.bucket, sum(e.n) AS n FROM {hourly} h "
            f"CROSS JOIN LATERAL {entries_sql('h.' + column)} e "
            "WHERE h.probe_id = g.probe_id AND h.region_id = g.region_id "
            "AND h.hour >= %(day)s AND h.hour < %(end)s GROUP BY e.bucket) s)"
        )

    outcomes = (
        "(SELECT coalesce(jsonb_object_agg(s.key, s.n), '{}'::jsonb) FROM ("
        f"SELECT e.key, sum(e.value::bigint) AS n FROM {hourly} h "
        "CROSS JOIN LATERAL jsonb_each_text(h.outcomes) e "
        "WHERE h.probe_id = g.probe_id AND h.region_id = g.region_id "
        "AND h.hour >= %(day)s AND h.hour < %(end)s GROUP BY e.key) s)"
    )
    fields = [m.rollup_field for m in HISTOGRAM]
    return f"""
        INSERT INTO {daily}
            (probe_id, target_id, region_id, day, samples, errors, updated_at, outcomes, {", ".join(fields)})
        SELECT g.probe_id, g.target_id, g.region_id, %(day)s, g.samples, g.errors,
               %(now)s, {outcomes}, {", ".join(merged(c) for c in fields)}
        FROM (
            -- A probe re-pointed at another target during the day is
            -- counted under its latest target for that day.
            SELECT probe_id, region_id, (array_agg(target_id ORDER BY hour DESC))[1] AS target_id,
                   sum(samples) AS samples, sum(errors) AS errors
            FROM {hourly}
            WHERE hour >= %(day)s AND hour < %(end)s
            GROUP BY probe_id, region_id
        ) g
    """


def rebuild_day(day: datetime) -> int:
    """(Re)build the DailyRollup rows of one UTC day by merging its
    HourlyRollup rows, whether or not all its hours are marked. Returns the
    number of rows written. Call it inside the transaction that changed the
    day's hourly rows (_build does when that leaves the day complete), so
    that no commit ever shows a day's 24 marked hours next to a stale day."""
    from probes.models import DailyRollup, HourlyRollup

    day = floor_day(day)
    with transaction.atomic():
        lock_day(day)
        DailyRollup.objects.filter(day=day).delete()
        with connection.cursor() as cur:
            # Hundreds of small merges look expensive enough to the planner
            # to compile, which costs more than it saves.
            cur.execute("SET LOCAL jit = off")
            cur.execute(
                _daily_merge_sql(HourlyRollup._meta.db_table, DailyRollup._meta.db_table),
                {"day": day, "end": day + DAY, "now": datetime.now(UTC)},
            )
            return cur.rowcount


# A value's bucket is width_bucket over probes.histogram.SQL_EDGES. The
# statement packs a metric's position and the bucket into one int
# (position * _SLOT + bucket) so that one array per (probe, region, hour)
# carries every metric.
_EDGE_PARAM = SQL_EDGES
_SHIFT = 10
_SLOT = 1 << _SHIFT
assert BUCKETS <= _SLOT


@functools.cache
def _hourly_sql(with_day: bool = False) -> str:
    """One INSERT for every (probe, region, hour) with raw rows in
    [since, until), histograms in their stored form (probes.packed); with_day
    (only for [since, until) a whole UTC day) also inserts the day's
    DailyRollup rows, counted from the same raw rows in the same statement.

    Shaped for speed (bench/rollup.py): the raw rows are read once and
    grouped once, each group carrying its bucket indexes in one int array
    (array_agg of one 8-element row per measurement); each group's array is
    then counted by one small subquery into all its histograms. Counting
    (group, metric, bucket) triples in one big GROUP BY instead (with
    LATERAL VALUES or GROUPING SETS) was four to eight times slower on a day
    of bench/rollup.py's rows: it makes a tuple per value, and at a few rows
    per series and hour nearly every value is its own group.

    The day's groups are a second grouping set of the same sort, so they
    cost a fraction of merging the day's hourly histograms afterwards (0.3 against
    0.8 CPU seconds on a day of bench/rollup.py's rows), and, read by the
    same statement, they hold exactly the rows its hours hold: the merge of
    the hours written, which is what rebuild_day would write when no other
    rollup is left in the day (_build checks that, and merges otherwise).

    A probe re-pointed at another target during the hour is counted under
    the target of its latest row (latest started_at, then highest id), as the
    daily merge counts a day under its latest hour's (the latest row of the
    day, so a day group takes its latest row's target too).

    The region rollups' 1 h blocks of the hours (probes.rollups.ladder) are a
    third grouping set, (region, hour), written by the same statement: merging
    the hours' histograms into them afterwards (in SQL, entry by entry) cost
    more than this whole statement's SELECT, counting them here only part of
    it (docs/benchmarks.md, "Rollup builds"). A region group has no probe
    (NULL) and no percentile cells, nor has a day group."""
    from probes.models import DailyRollup, HourlyRollup, Measurement, RegionRollup

    raw = Measurement._meta.db_table
    fields = ", ".join(m.rollup_field for m in HISTOGRAM)
    updates = ", ".join(
        f"{c} = EXCLUDED.{c}"
        for c in ("target_id", "samples", "errors", "outcomes", "updated_at", "percentile_cells", *fields.split(", "))
    )
    window = (
        "started_at >= %(since)s AND started_at < %(until)s"
        # The slot rule (probes.slot_time): the same rows, and only the
        # partitions of the days they can be in.
        " AND scheduled_for >= %(low)s AND scheduled_for < %(high)s"
        # The rows at or below the build's cut (locks.take_cut): all committed, and the ones HourCut says
        # these rollups count.
        " AND id <= %(cut)s"
    )
    hour = "date_trunc('hour', started_at, 'UTC')"
    # The day's groups have no hour (NULL): their period is [since, until);
    # the region blocks' groups no probe (NULL).
    day_set = " (probe_id, region_id)," if with_day else ""
    sets = f"GROUPING SETS ((probe_id, region_id, {hour}),{day_set} (region_id, {hour}))"
    block_columns = ", ".join(JSON_COLUMNS)
    block_updates = ", ".join(
        f"{c} = EXCLUDED.{c}" for c in ("samples", "errors", "sample_seconds", "updated_at", *JSON_COLUMNS)
    )
    day_insert = (
        f"""
        , day_built AS (
            INSERT INTO {DailyRollup._meta.db_table}
                (probe_id, target_id, region_id, day, samples, errors, outcomes, {fields}, updated_at)
            SELECT probe_id, target_id, region_id, %(since)s, samples, errors, outcomes, {fields}, %(now)s
            FROM rolled WHERE hour IS NULL
        )"""
        if with_day
        else ""
    )
    return f"""
        -- The text of each histogram bucket as regions.csv writes it (probes.significant), for the cells.
        WITH sig AS (SELECT {names_sql()} AS t),
        rolled AS (
            SELECT g.probe_id,
                   CASE WHEN g.probe_id IS NULL THEN NULL WHEN g.target_lo = g.target_hi THEN g.target_lo ELSE (
                       SELECT l.target_id FROM {raw} l
                       WHERE l.probe_id = g.probe_id AND l.region_id = g.region_id
                         AND l.started_at >= coalesce(g.hour, %(since)s)
                         AND l.started_at < coalesce(g.hour + interval '1 hour', %(until)s)
                         AND l.scheduled_for >= %(low)s AND l.scheduled_for < %(high)s AND l.id <= %(cut)s
                       ORDER BY l.started_at DESC, l.id DESC LIMIT 1
                   ) END AS target_id,
                   g.region_id, g.hour, g.samples, g.errors,
                   CASE WHEN g.outcome_lo = g.outcome_hi THEN jsonb_build_object(g.outcome_lo, g.samples) ELSE (
                       SELECT jsonb_object_agg(o, n) FROM (
                           SELECT o, count(*) AS n FROM unnest(g.failures) AS o GROUP BY o
                           UNION ALL
                           SELECT 'ok', g.samples - g.errors WHERE g.samples > g.errors
                       ) AS c
                   ) END AS outcomes,
                   {fields}, rk.cells
            FROM (
                SELECT probe_id, region_id, {hour} AS hour,
                       count(*) AS samples, count(*) FILTER (WHERE outcome <> 'ok') AS errors,
                       min(target_id) AS target_lo, max(target_id) AS target_hi,
                       min(outcome) AS outcome_lo, max(outcome) AS outcome_hi,
                       -- Only read when a group has more than one outcome; the
                       -- failures alone (a few percent of the rows): collecting
                       -- every row's outcome cost a seventh of the statement.
                       array_agg(outcome) FILTER (WHERE outcome <> 'ok') AS failures,
                       array_agg({bucket_row_sql("m")}) AS buckets
                FROM {raw} m
                WHERE {window}
                GROUP BY {sets}
            ) AS g
            CROSS JOIN LATERAL {histograms_sql("g.buckets")} AS h
            CROSS JOIN LATERAL ({_cells_sql()}) AS rk
        ), built AS (
            INSERT INTO {HourlyRollup._meta.db_table}
                (probe_id, target_id, region_id, hour, samples, errors, outcomes, {fields}, updated_at,
                 percentile_cells)
            SELECT probe_id, target_id, region_id, hour, samples, errors, outcomes, {fields}, %(now)s,
                   -- Kept only on a row alone in its (hour, region, target), which regions.csv then writes as
                   -- it is (HourlyRollup.percentile_cells); the hour's rows are all rebuilt together, so this
                   -- stays true. Partitioned hour first: the rows come out of the window's sort, and are stored,
                   -- an hour's rows together, as the hour-by-hour rollup of a running installation stores them.
                   -- A read of every series over a few hours (a window's ends, the table of every target) then
                   -- reads a few pages per hour instead of one or two per row: a day's rows written in series
                   -- order put the 900 rows of an hour on 550 of the day's pages at 100 M rows.
                   CASE WHEN count(*) OVER (PARTITION BY hour, target_id, region_id) = 1 THEN cells END
            FROM rolled WHERE hour IS NOT NULL AND probe_id IS NOT NULL
            -- A rollup built before is replaced in place (no delete, then
            -- insert, of the whole range first).
            ON CONFLICT (probe_id, region_id, hour) DO UPDATE SET {updates}
            RETURNING hour
        ), blocks_built AS (
            INSERT INTO {RegionRollup._meta.db_table}
                (region_id, span_hours, start, samples, errors, sample_seconds, updated_at, {block_columns})
            SELECT region_id, 1, hour, samples, errors, {sample_seconds_sql("rolled")}, %(now)s,
                   {block_columns}
            FROM rolled WHERE probe_id IS NULL
            ON CONFLICT (span_hours, start, region_id) DO UPDATE SET {block_updates}
        ){day_insert}
        SELECT hour, count(*) FROM built GROUP BY hour
    """


def bucket_row_sql(alias: str) -> str:
    """SQL of one raw row's (alias) bucket indexes, every metric of HISTOGRAM packed with its position (position *
    _SLOT + bucket; NULL where the metric is), as an int array: the statement gathers a group's rows of them with
    array_agg. Also what bench/rollup.py's floors measure."""
    buckets = ", ".join(
        f"width_bucket({alias}.{metric.column}, %(edges)s::float8[]) + {i * _SLOT}"
        for i, metric in enumerate(HISTOGRAM)
    )
    return f"ARRAY[{buckets}]"


def histograms_sql(buckets: str) -> str:
    """A subquery of one row: every HISTOGRAM metric's stored histogram (probes.packed), named by its rollup field,
    counted from `buckets`, one group's packed indexes (bucket_row_sql rows gathered by array_agg)."""
    hists = ", ".join(
        f"{pack_agg(f'x & {_SLOT - 1}', 'n', f'x >> {_SHIFT} = {i}')} AS {metric.rollup_field}"
        for i, metric in enumerate(HISTOGRAM)
    )
    return f"""(
                SELECT {hists}
                FROM (
                    -- unnest in a select list streams the elements (ProjectSet);
                    -- FROM unnest() first copies them into a tuplestore for
                    -- every group: about 4 percent of the statement's CPU time.
                    SELECT x, count(*) AS n FROM (SELECT unnest({buckets}) AS x) AS u WHERE x IS NOT NULL GROUP BY x
                ) AS c
            )"""


def _cells_sql() -> str:
    """HourlyRollup.percentile_cells of a group g of _hourly_sql: from its packed bucket indexes (g.buckets),
    each REGION_CSV metric's bucket holding the nearest rank of each of PERCENTILES (probes.readings.rank), in
    the order of regions.csv's columns, as the export writes that bucket (probes.significant.cells_sql over the
    statement's sig). Apart from the histograms' subquery, so that one stays as it is.

    The group's values of those metrics are sorted once: packed as position * _SLOT + bucket, each metric's
    values are one run of the sorted array, in bucket order, so the value of rank r of metric i is element
    (values of the metrics before i) + r. The rank in integers: ceil(q * n) = (num * n + den - 1) / den for
    q = num / den exactly, at least 1. (Window sums over (metric, bucket) counts cost half the build again.)"""
    positions = [HISTOGRAM.index(m) for m in REGION_CSV]
    counts = ", ".join(f"count(*) FILTER (WHERE x >> {_SHIFT} = {i}) AS n{i}" for i in positions)
    picks = []
    for k, i in enumerate(positions):
        before = " + ".join(f"n{j}" for j in positions[:k]) or "0"
        for q in PERCENTILES.values():
            num, den = Fraction(str(q)).as_integer_ratio()
            rank = f"greatest(1, (n{i} * {num} + {den - 1}) / {den})"
            picks.append(f"CASE WHEN n{i} > 0 THEN v[{before} + {rank}] & {_SLOT - 1} END")
    return f"""
        SELECT {cells_sql(picks, "(SELECT t FROM sig)")} AS cells
        FROM (
            SELECT array_agg(x ORDER BY x) AS v, {counts}
            -- Only an hour's group of one probe keeps percentile cells: none of a region group (no probe) or a
            -- day's (no hour; DailyRollup has none) is sorted. A day's groups hold every value of its hours again, so
            -- sorting them too would sort every value twice for cells nobody reads.
            FROM unnest(g.buckets) AS x
            WHERE g.probe_id IS NOT NULL AND g.hour IS NOT NULL AND x >> {_SHIFT} IN ({", ".join(map(str, positions))})
        ) AS s
    """


def _build(since: datetime, until: datetime, *, daily: bool, series_blocks_too: bool = True) -> int:
    """Rebuild the hours of [since, until) (whole hours of one UTC day), then
    the day's daily rollups if it ends complete (all 24 hours marked) unless
    daily=False, and mark the ended hours no ingest wrote into meanwhile; then the series blocks holding the day
    (probes.rollups.series_blocks) if it ends complete, unless
    series_blocks_too=False (the caller's closing pass builds them). One
    transaction; returns the hourly rollup rows written."""
    from probes.models import DailyRollup, HourlyRollup, RollupHour

    day = floor_day(since)
    assert since == floor_hour(since) and until == floor_hour(until) and since < until <= day + DAY
    hours = hours_between(since, until)
    low, high = slot_bounds(since, until)
    now = datetime.now(UTC)
    table = HourlyRollup._meta.db_table
    # A whole day's statement writes the day's rollups too (see _hourly_sql).
    with_day = daily and since == day and until == day + DAY
    with transaction.atomic():
        lock_day(day)
        # Before the statement that reads raw rows (see locks.py).
        versions = read_versions(hours)
        cut = take_cut()
        with connection.cursor() as cur:
            # The day's rows are sorted by series and hour in memory
            # instead of in a merge on disk, as at the default work_mem.
            # JIT off: on and off were within the noise on a day of
            # bench/rollup.py's rows, and off costs no compile on the
            # small current-hour rebuilds. (Parallel workers cannot
            # help: PostgreSQL never runs an INSERT's SELECT in parallel;
            # rebuild_range runs days side by side instead.)
            cur.execute("SET LOCAL work_mem = '128MB'")
            cur.execute("SET LOCAL jit = off")
            if with_day:
                cur.execute(f"DELETE FROM {DailyRollup._meta.db_table} WHERE day = %s", [day])
            cur.execute(
                _hourly_sql(with_day),
                {
                    "since": since,
                    "until": until,
                    "low": low,
                    "high": high,
                    "now": now,
                    "cut": cut,
                    "edges": _EDGE_PARAM,
                },
            )
            written = dict(cur.fetchall())
            # A series with no raw rows left in a rebuilt hour (its rows
            # deleted) loses its rollup there; an hour with no raw rows at
            # all (pruned) keeps every rollup it has.
            cur.execute(f"DELETE FROM {table} WHERE hour = ANY(%s) AND updated_at <> %s", [sorted(written), now])
            # Only the hours the statement wrote nothing into can hold rollups
            # it did not write (a full day's rebuild reads no row here).
            cur.execute(
                f"SELECT DISTINCT hour FROM {table} WHERE hour >= %s AND hour < %s AND hour <> ALL(%s::timestamptz[])",
                [since, until, sorted(written)],
            )
            with_rollups = set(written) | {h for (h,) in cur.fetchall()}

        # Only an hour that has ended can be complete; an hour without raw
        # rows is complete when it has no rollups either (nothing happened),
        # and otherwise (its raw rows pruned) keeps its rollups and its mark.
        def completes(h: datetime) -> bool:
            return h + HOUR <= now and (h in written or h not in with_rollups)

        # Whether all 24 hours of the day carry a mark once this commits: the
        # other hours' marks, the hours this marks, and the marks of hours it
        # leaves as they are (rollups kept, raw rows pruned). An ingest meanwhile
        # can only take marks away (locks.py), so a day predicted incomplete
        # ends incomplete.
        marked = set(RollupHour.objects.filter(hour__gte=day, hour__lt=day + DAY).values_list("hour", flat=True))
        stays = {h for h in hours if completes(h) or (h not in written and h in marked)}
        ends_marked = (marked - set(hours)) | stays
        ends_complete = len(ends_marked) == 24
        # The day's rows are read only while all its hours are marked
        # (probes.readings.plan), so they are merged only by the rebuild that
        # leaves it so: the current hour's rebuild every few minutes, and each
        # ended hour's but the day's last, merged its day for nothing (most
        # of an hour's rebuild). The rows the whole
        # day's statement wrote are the merge of its hours unless some hour
        # kept rollups it did not write (raw rows pruned).
        if daily and ends_complete and not (with_day and with_rollups <= set(written)):
            rebuild_day(day)
        # The statement wrote the 1 h blocks of the hours it found raw rows in.
        rebuild_blocks(since, until, now, hours_built=sorted(written))
        # The series' 3 h and 12 h blocks holding these hours, merged again where they will be complete.
        hour_blocks_built = hour_blocks.rebuild(since, until, now, ends_marked)

        # The series blocks holding the day go unmarked before the day's new
        # rollups commit; they are rebuilt only if the day should end complete
        # (the current day, rebuilt every few minutes, never does), before the
        # version rows are locked, and marked after the hours' own marks.
        lock_series_block(block_start(day, series_blocks.LARGEST))
        series_blocks.unmark(day)
        rebuilt = series_blocks.rebuild(day, day + DAY, now) if series_blocks_too and ends_complete else {}
        # Last, so the version rows stay locked only until the commit.
        unchanged = unchanged_hours(versions)
        complete = [h for h in hours if h in unchanged and completes(h)]
        RollupHour.objects.filter(hour__in=[h for h in written if h not in complete]).delete()
        RollupHour.objects.bulk_create(
            [RollupHour(hour=h, built_at=now) for h in complete],
            update_conflicts=True,
            unique_fields=["hour"],
            update_fields=["built_at"],
        )
        _record_cuts(hours, written, with_rollups, cut, now)
        # Marks only blocks whose hours are all marked now: an ingest that
        # moved a version meanwhile leaves its hour, and so them, unmarked.
        series_blocks.mark_complete(rebuilt, now)
        series_blocks.mark_complete(hour_blocks_built, now)
    return sum(written.values())


def _record_cuts(
    hours: list[datetime], written: dict[datetime, int], with_rollups: set[datetime], cut: int, now: datetime
) -> None:
    """HourCut of each hour whose rollups are now exactly its raw rows up to the cut: the hours written, and
    those with neither raw rows nor rollups. An hour that kept rollups it did not write (raw rows pruned) loses
    its cut. An hour that has not ended records the latest started_at counted (HourCut.newest)."""
    from probes.models import HourCut, Measurement

    exact = [h for h in hours if h in written or h not in with_rollups]
    newest: dict[datetime, datetime | None] = {}
    with connection.cursor() as cur:
        for h in exact:
            if h + HOUR > now:
                low, high = slot_bounds(h, h + HOUR)
                cur.execute(
                    f"SELECT max(started_at) FROM {Measurement._meta.db_table} WHERE started_at >= %s "
                    "AND started_at < %s AND scheduled_for >= %s AND scheduled_for < %s AND id <= %s",
                    [h, h + HOUR, low, high, cut],
                )
                newest[h] = cur.fetchone()[0] or h
    HourCut.objects.filter(hour__in=[h for h in hours if h not in exact]).delete()
    HourCut.objects.bulk_create(
        [HourCut(hour=h, cut=cut, newest=newest.get(h), built_at=now) for h in exact],
        update_conflicts=True,
        unique_fields=["hour"],
        update_fields=["cut", "newest", "built_at"],
    )


def rebuild_hour(hour: datetime, *, daily: bool = True) -> int:
    """(Re)build every (probe, region) rollup of one UTC hour from raw rows,
    then the daily rollups of its day if that leaves all its hours marked.
    Returns the number of hourly rollup rows written. Running it twice gives
    the same rollups. An hour with no raw rows left (pruned) keeps its
    rollups.

    daily=False leaves the day to the caller, who must call rebuild_day for
    it inside the same transaction."""
    hour = floor_hour(hour)
    return _build(hour, hour + HOUR, daily=daily)


def rebuild_range(since: datetime, until: datetime, *, workers: int = 1) -> tuple[int, int]:
    """Rebuild every hour overlapping [since, until). Returns (hours, rows).

    One statement and one transaction per UTC day: its hours and, for a whole
    day, its daily rows in the same statement (a partial first or last day is
    merged from its hours after it), so no commit shows the day's new marks
    without its new daily rows.
    A day rather than the whole range in one statement: a rebuild's memory,
    locks and transaction stay one day's, and days can run side by side.

    Over more than one day the series blocks holding them
    (probes.rollups.series_blocks) are rebuilt once, after every day is.

    workers > 1 builds that many days at once, each on a connection of its
    own (days never share a lock or a row): PostgreSQL runs an INSERT on one
    core, so this is how a long range uses more. Only outside a transaction:
    other connections could not see its uncommitted rows."""
    start, end = floor_hour(since), ceil_hour(until)
    ranges = []
    day = floor_day(start)
    while day < end:
        ranges.append((max(start, day), min(end, day + DAY)))
        day += DAY
    hours = len(hours_between(start, end))
    # Over several days the series blocks are merged once, after them all,
    # not once a day (a 16-day block would be merged 16 times).
    closing = len(ranges) > 1
    rows = sum(side_by_side(lambda bounds: _build(*bounds, daily=True, series_blocks_too=not closing), ranges, workers))
    if closing:
        series_blocks.rebuild_series_range(
            floor_day(start), floor_day(ranges[-1][0]) + DAY, datetime.now(UTC), workers=workers
        )
    return hours, rows


def rollup_stale_hours(lookback_hours: int = 48) -> int:
    """The schedule's job: build the ended hours of the last two days that
    have no mark (never built, or made stale by a late row)."""
    from probes.models import RollupHour

    now = datetime.now(UTC)
    current = floor_hour(now)
    hours = [current - HOUR * i for i in range(1, lookback_hours + 1)]
    marked = set(RollupHour.objects.filter(hour__in=hours).values_list("hour", flat=True))
    built = 0
    for hour in sorted(set(hours) - marked):
        built += rebuild_hour(hour)
    # The current hour too, so rollup readers of long windows stay fresh; it
    # gets no mark, so readers still use its raw rows.
    rebuild_hour(current)
    return built
