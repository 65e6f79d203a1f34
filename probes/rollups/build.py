"""Building rollups: an hour range's rows of every kind of the catalogue (probes.rollups.catalogue), and the
schedule's job over stale hours.

An hour is "rolled up" when a RollupHour mark says so; the mark is written in
the same transaction as the hour's rollups, only if no ingest stored a row in
the hour while it was being built (probes.rollups.locks), and removed by
ingest when a late measurement lands in that hour. Every kind of rollup row
over the hours (hourly rows, region and series blocks) is rebuilt in that
transaction by its kind's builder, called through the catalogue in its order
(each kind after the kind it is merged from), so no commit shows an hour's
new marks beside another kind's stale rows; readers (probes.readings) use a
row only while all its hours are marked. Histograms are kept for the metrics
of probes.metrics with histogram=True; percentiles are read from merged
histograms, never averaged.

Hourly rollups are built in SQL, one statement per range of hours (a day at
most: see _hourly_sql), so no raw row is ever read into Python; the Python
builder this replaced is kept as the reference the tests compare it with
(devtools/rollup_reference.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction

from django.db import connection, transaction

from probes.histogram import BUCKETS, SQL_EDGES
from probes.metrics import HISTOGRAM, PERCENTILES, REGION_CSV, latency_row_sql
from probes.packed import pack_agg
from probes.rollups.block_merge import JSON_COLUMNS
from probes.rollups.catalogue import KINDS
from probes.rollups.locks import lock_day, read_versions, take_cut, unchanged_hours
from probes.rollups.periods import (
    DAY,
    HOUR,
    ceil_hour,
    floor_day,
    floor_hour,
    hours_between,
    sample_seconds_sql,
)
from probes.rollups.side_by_side import side_by_side
from probes.significant import cells_sql, names_sql
from probes.slot_time import slot_bounds

# A value's bucket is width_bucket over probes.histogram.SQL_EDGES. The
# statement packs a metric's position and the bucket into one int
# (position * _SLOT + bucket) so that one array per (probe, region, hour)
# carries every metric.
_EDGE_PARAM = SQL_EDGES
_SHIFT = 10
_SLOT = 1 << _SHIFT
assert BUCKETS <= _SLOT


@functools.cache
def _hourly_sql() -> str:
    """One INSERT for every (probe, region, hour) with raw rows in
    [since, until), histograms in their stored form (probes.packed).

    Shaped for speed (bench/rollup.py): the raw rows are read once and
    grouped once, each group carrying its bucket indexes in one int array
    (array_agg of one 8-element row per measurement); each group's array is
    then counted by one small subquery into all its histograms. Counting
    (group, metric, bucket) triples in one big GROUP BY instead (with
    LATERAL VALUES or GROUPING SETS) was four to eight times slower on a day
    of bench/rollup.py's rows: it makes a tuple per value, and at a few rows
    per series and hour nearly every value is its own group.

    A probe re-pointed at another target during the hour is counted under
    the target of its latest row (latest started_at, then highest id), as the
    blocks merged from hours count a block under its latest hour's.

    The region rollups' 1 h blocks of the hours (probes.rollups.ladder) are a
    second grouping set, (region, hour), written by the same statement: merging
    the hours' histograms into them afterwards (in SQL, entry by entry) cost
    more than this whole statement's SELECT, counting them here only part of
    it (docs/benchmarks.md, "Rollup builds"). A region group has no probe
    (NULL) and no percentile cells."""
    from probes.models import HourlyRollup, Measurement, RegionRollup

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
    # The region blocks' groups have no probe (NULL).
    sets = f"GROUPING SETS ((probe_id, region_id, {hour}), (region_id, {hour}))"
    block_columns = ", ".join(JSON_COLUMNS)
    block_updates = ", ".join(
        f"{c} = EXCLUDED.{c}" for c in ("samples", "errors", "sample_seconds", "updated_at", *JSON_COLUMNS)
    )
    return f"""
        -- The text of each histogram bucket as regions.csv writes it (probes.significant), for the cells.
        WITH sig AS (SELECT {names_sql()} AS t),
        rolled AS (
            SELECT g.probe_id,
                   CASE WHEN g.probe_id IS NULL THEN NULL WHEN g.target_lo = g.target_hi THEN g.target_lo ELSE (
                       SELECT l.target_id FROM {raw} l
                       WHERE l.probe_id = g.probe_id AND l.region_id = g.region_id
                         AND l.started_at >= g.hour AND l.started_at < g.hour + interval '1 hour'
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
        )
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
    # A call refused for capacity (probes.metrics.latency_row_sql) gives no value to any histogram: one test of its
    # outcome per row rather than one per metric.
    # The same length either way: array_agg gathers a group's rows into one two-dimensional array.
    nothing = ", ".join(["NULL"] * len(HISTOGRAM))
    return f"CASE WHEN {latency_row_sql(alias)} THEN ARRAY[{buckets}] ELSE ARRAY[{nothing}]::int[] END"


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
            -- Only a group of one probe keeps percentile cells: a region group (no probe) is not sorted.
            FROM unnest(g.buckets) AS x
            WHERE g.probe_id IS NOT NULL AND x >> {_SHIFT} IN ({", ".join(map(str, positions))})
        ) AS s
    """


@dataclass
class HourBuild:
    """One rebuild of the hours of [since, until) (whole hours of one UTC day), as each kind's builder sees it
    (catalogue.RollupKind.builder): called in catalogue order, in the rebuild's transaction, holding the day's
    lock. The hourly kind's builder, first, fills in what its statement wrote; the others read it."""

    since: datetime
    until: datetime
    now: datetime
    # The measurement id the rebuild counts rows up to (locks.take_cut).
    cut: int
    # A range rebuild's closing pass (the kinds' closers) follows: blocks over days may be left to it.
    closing: bool = False
    # Filled by the hourly builder: rollup rows written per hour (the hours it found raw rows in), the hours of
    # the range holding rollups once it is done, and the hours of the day that will carry a RollupHour mark when
    # the transaction commits if no ingest moves their version meanwhile (an ingest can only take marks away,
    # locks.py, so a block predicted incomplete ends incomplete).
    written: dict[datetime, int] = field(default_factory=dict)
    with_rollups: set[datetime] = field(default_factory=set)
    ends_marked: set[datetime] = field(default_factory=set)

    @property
    def day(self) -> datetime:
        return floor_day(self.since)

    @property
    def hours(self) -> list[datetime]:
        return hours_between(self.since, self.until)

    @property
    def ends_complete(self) -> bool:
        """Whether all 24 hours of the day are predicted marked (ends_marked)."""
        return len(self.ends_marked) == 24

    def completes(self, hour: datetime) -> bool:
        """Whether the rebuild makes this hour of its range complete: only an hour that has ended can be; an hour
        without raw rows is complete when it has no rollups either (nothing happened), and otherwise (its raw rows
        pruned) keeps its rollups and its mark."""
        return hour + HOUR <= self.now and (hour in self.written or hour not in self.with_rollups)


def build_hours(job: HourBuild) -> None:
    """The hourly kind's builder: the hours' HourlyRollup rows and their region 1 h blocks from raw rows in one
    statement (_hourly_sql), the rollups of series with no raw row left in a rebuilt hour deleted; fills in job's
    written, with_rollups and ends_marked. The hours' marks and cuts are written by _build after every kind."""
    from probes.models import HourlyRollup, RollupHour

    table = HourlyRollup._meta.db_table
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
        low, high = slot_bounds(job.since, job.until)
        cur.execute(
            _hourly_sql(),
            {
                "since": job.since,
                "until": job.until,
                "low": low,
                "high": high,
                "now": job.now,
                "cut": job.cut,
                "edges": _EDGE_PARAM,
            },
        )
        job.written = dict(cur.fetchall())
        # A series with no raw rows left in a rebuilt hour (its rows
        # deleted) loses its rollup there; an hour with no raw rows at
        # all (pruned) keeps every rollup it has.
        cur.execute(f"DELETE FROM {table} WHERE hour = ANY(%s) AND updated_at <> %s", [sorted(job.written), job.now])
        # Only the hours the statement wrote nothing into can hold rollups
        # it did not write (a full day's rebuild reads no row here).
        cur.execute(
            f"SELECT DISTINCT hour FROM {table} WHERE hour >= %s AND hour < %s AND hour <> ALL(%s::timestamptz[])",
            [job.since, job.until, sorted(job.written)],
        )
        job.with_rollups = set(job.written) | {h for (h,) in cur.fetchall()}
    # The day's hours that carry a mark once this commits: the other hours' marks, the hours this marks, and the
    # marks of hours it leaves as they are (rollups kept, raw rows pruned).
    day = job.day
    marked = set(RollupHour.objects.filter(hour__gte=day, hour__lt=day + DAY).values_list("hour", flat=True))
    hours = job.hours
    stays = {h for h in hours if job.completes(h) or (h not in job.written and h in marked)}
    job.ends_marked = (marked - set(hours)) | stays


def _build(since: datetime, until: datetime, *, closing: bool = False) -> int:
    """Rebuild the hours of [since, until) (whole hours of one UTC day): every kind of the catalogue, by its
    builder, in catalogue order; then mark the ended hours no ingest wrote into meanwhile, and run the finishing
    steps the builders returned (their blocks' marks) in the same order. closing: a range rebuild's closing pass
    follows (rebuild_range), so builders may leave it the blocks over days. One transaction; returns the hourly
    rollup rows written."""
    from probes.models import RollupHour

    day = floor_day(since)
    assert since == floor_hour(since) and until == floor_hour(until) and since < until <= day + DAY
    with transaction.atomic():
        lock_day(day)
        job = HourBuild(since=since, until=until, now=datetime.now(UTC), cut=0, closing=closing)
        # Before the statement that reads raw rows (see locks.py).
        versions = read_versions(job.hours)
        job.cut = take_cut()
        finishing = [kind.builder_function()(job) for kind in KINDS]
        # Last, so the version rows stay locked only until the commit.
        unchanged = unchanged_hours(versions)
        complete = [h for h in job.hours if h in unchanged and job.completes(h)]
        RollupHour.objects.filter(hour__in=[h for h in job.written if h not in complete]).delete()
        RollupHour.objects.bulk_create(
            [RollupHour(hour=h, built_at=job.now) for h in complete],
            update_conflicts=True,
            unique_fields=["hour"],
            update_fields=["built_at"],
        )
        _record_cuts(job.hours, job.written, job.with_rollups, job.cut, job.now)
        # Blocks' marks vouch only for hours marked now: an ingest that moved a version meanwhile leaves its hour,
        # and so them, unmarked.
        for finish in finishing:
            if finish is not None:
                finish()
    return sum(job.written.values())


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


def rebuild_hour(hour: datetime) -> int:
    """(Re)build every rollup of one UTC hour (every kind of the catalogue) from raw rows. Returns the number of
    hourly rollup rows written. Running it twice gives the same rollups. An hour with no raw rows left (pruned)
    keeps its rollups."""
    hour = floor_hour(hour)
    return _build(hour, hour + HOUR)


def rebuild_range(since: datetime, until: datetime, *, workers: int = 1) -> tuple[int, int]:
    """Rebuild every hour overlapping [since, until). Returns (hours, rows).

    One statement and one transaction per UTC day (_build), so no commit shows the day's new marks beside
    rollups of any kind not rebuilt with them. A day rather than the whole range in one statement: a rebuild's
    memory, locks and transaction stay one day's, and days can run side by side.

    Over more than one day the kinds with a closer (catalogue.RollupKind.closer: the series blocks of days)
    leave their blocks to it, called once after every day is built (a 16-day block would otherwise be merged
    16 times).

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
    closing = len(ranges) > 1
    rows = sum(side_by_side(lambda bounds: _build(*bounds, closing=closing), ranges, workers))
    if closing:
        now = datetime.now(UTC)
        for kind in KINDS:
            closer = kind.closer_function()
            if closer is not None:
                closer(floor_day(start), floor_day(ranges[-1][0]) + DAY, now, workers=workers)
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
