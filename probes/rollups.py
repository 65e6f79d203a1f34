"""Hourly and daily rollups with mergeable histograms, their rebuild, the
readers that mix rollups with raw rows, and retention.

An hour is "rolled up" when a RollupHour mark says so; the mark is written in
the same transaction as the hour's rollups, and removed by ingest when a late
measurement lands in that hour. A day's DailyRollup rows are the merge of its
hourly rows, rebuilt in the same transaction as any of its hours, so a day
whose 24 hours are all marked can be read from one row per probe and region.
Readers use daily rollups for such days, hourly rollups for other marked
hours and raw rows for everything else, so a reading is always complete.
Percentiles are read from merged histograms, never averaged.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import zlib
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from probes.histogram import Histogram

log = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
METRICS = ("ttft", "ttfat", "ttfb", "connect", "tls", "total", "dns")
METRIC_COLUMNS = {m: f"{m}_ms" for m in METRICS}
# Raw columns whose values a reading can keep as they are (see read_window).
RAW_VALUE_COLUMNS = ("tokens_per_s", *METRIC_COLUMNS.values())
# Advisory lock namespaces (first key of pg_advisory_xact_lock(int, int)).
_HOUR_LOCKS = 7141
_DAY_LOCKS = 7142


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


def lock_hours(hours: Iterable[datetime], *, shared: bool = False) -> None:
    """Serialise a rebuild of an hour with ingest into it: without this, a row
    committed during a rebuild could be missed while the hour is marked
    complete. Ingest takes the lock shared (batches never wait for each
    other), a rebuild exclusive. Sorted, so two lockers never deadlock."""
    keys = sorted({zlib.crc32(floor_hour(h).isoformat().encode()) for h in hours})
    fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    with connection.cursor() as cur:
        for key in keys:
            cur.execute(f"SELECT {fn}(%s, %s)", [_HOUR_LOCKS, key - 2**31])


def _lock_day(day: datetime) -> None:
    """Two hours of one day rebuilt at once would each merge the day without
    the other's uncommitted hour, and the later commit would leave a daily
    row short of the earlier one. Holding this until commit makes the second
    merge wait and then see the first hour (read committed takes a fresh
    snapshot per statement). Always taken after the hour lock, never before,
    so rebuilds cannot deadlock."""
    key = zlib.crc32(floor_day(day).isoformat().encode())
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_DAY_LOCKS, key - 2**31])


_DAILY_JSON_COLUMNS = ("outcomes", *[f"{m}_hist" for m in METRICS])


def _daily_merge_sql(hourly: str, daily: str) -> str:
    # Merged in SQL: one pass over at most 24 rows per probe and region, no
    # JSON parsing in Python; jsonb orders numeric keys of equal length
    # bytewise, so merged histograms come out in bucket order like to_sparse.
    def merged(column: str) -> str:
        return (
            "(SELECT coalesce(jsonb_object_agg(s.key, s.n), '{}'::jsonb) FROM ("
            f"SELECT e.key, sum(e.value::bigint) AS n FROM {hourly} h "
            f"CROSS JOIN LATERAL jsonb_each_text(h.{column}) e "
            "WHERE h.probe_id = g.probe_id AND h.region_id = g.region_id "
            "AND h.hour >= %(day)s AND h.hour < %(end)s GROUP BY e.key) s)"
        )

    return f"""
        INSERT INTO {daily}
            (probe_id, target_id, region_id, day, samples, errors, tokens_per_s_sum, tokens_per_s_count,
             updated_at, {", ".join(_DAILY_JSON_COLUMNS)})
        SELECT g.probe_id, g.target_id, g.region_id, %(day)s, g.samples, g.errors, g.tps_sum, g.tps_count,
               %(now)s, {", ".join(merged(c) for c in _DAILY_JSON_COLUMNS)}
        FROM (
            -- A probe re-pointed at another target during the day is
            -- counted under its latest target for that day. Floats summed
            -- in hour order, so a rebuild gives the same bits every time.
            SELECT probe_id, region_id, (array_agg(target_id ORDER BY hour DESC))[1] AS target_id,
                   sum(samples) AS samples, sum(errors) AS errors,
                   sum(tokens_per_s_sum ORDER BY hour) AS tps_sum, sum(tokens_per_s_count) AS tps_count
            FROM {hourly}
            WHERE hour >= %(day)s AND hour < %(end)s
            GROUP BY probe_id, region_id
        ) g
    """


def rebuild_day(day: datetime) -> int:
    """(Re)build the DailyRollup rows of one UTC day by merging its
    HourlyRollup rows. Returns the number of rows written. Call it inside
    the transaction that changed the day's hourly rows (rebuild_hour does),
    so that no commit ever shows marked hours next to a stale day."""
    from probes.models import DailyRollup, HourlyRollup

    day = floor_day(day)
    with transaction.atomic():
        _lock_day(day)
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


def rebuild_hour(hour: datetime, *, daily: bool = True) -> int:
    """(Re)build every (probe, region) rollup of one UTC hour from raw rows,
    then the daily rollups of its day. Returns the number of hourly rollup
    rows written. Running it twice gives the same rollups. An hour with no
    raw rows left (pruned) keeps its rollups.

    daily=False leaves the day to the caller, who must call rebuild_day for
    it inside the same transaction (rebuild_range does, once per day)."""
    from probes.models import HourlyRollup, Measurement, RollupHour

    hour = floor_hour(hour)
    now = datetime.now(UTC)
    cols = ["probe_id", "region_id", "target_id", "outcome", "tokens_per_s", *METRIC_COLUMNS.values()]
    with transaction.atomic():
        lock_hours([hour])
        groups: dict[tuple[int, int], dict] = {}
        rows = (
            Measurement.objects.filter(started_at__gte=hour, started_at__lt=hour + HOUR)
            .values_list(*cols)
            .iterator(chunk_size=5000)
        )
        for probe_id, region_id, target_id, outcome, tps, *values in rows:
            g = groups.get((probe_id, region_id))
            if g is None:
                g = groups[(probe_id, region_id)] = {
                    "target_id": target_id,
                    "samples": 0,
                    "errors": 0,
                    "outcomes": defaultdict(int),
                    "tps_sum": 0.0,
                    "tps_count": 0,
                    "hists": {m: Histogram() for m in METRICS},
                }
            g["samples"] += 1
            g["outcomes"][outcome] += 1
            if outcome != "ok":
                g["errors"] += 1
            if tps is not None:
                g["tps_sum"] += tps
                g["tps_count"] += 1
            for metric, value in zip(METRICS, values):
                if value is not None:
                    g["hists"][metric].add(value)
        if not groups:
            has_rollups = HourlyRollup.objects.filter(hour=hour).exists()
            if not has_rollups and hour + HOUR <= now:
                RollupHour.objects.update_or_create(hour=hour, defaults={"built_at": now})
            return 0
        HourlyRollup.objects.filter(hour=hour).delete()
        HourlyRollup.objects.bulk_create(
            [
                HourlyRollup(
                    probe_id=probe_id,
                    region_id=region_id,
                    target_id=g["target_id"],
                    hour=hour,
                    samples=g["samples"],
                    errors=g["errors"],
                    outcomes=dict(g["outcomes"]),
                    tokens_per_s_sum=g["tps_sum"],
                    tokens_per_s_count=g["tps_count"],
                    **{f"{m}_hist": g["hists"][m].to_sparse() for m in METRICS},
                )
                for (probe_id, region_id), g in groups.items()
            ]
        )
        # Only an hour that has ended can be complete.
        if hour + HOUR <= now:
            RollupHour.objects.update_or_create(hour=hour, defaults={"built_at": now})
        else:
            RollupHour.objects.filter(hour=hour).delete()
        if daily:
            rebuild_day(hour)
    return len(groups)


def rebuild_range(since: datetime, until: datetime) -> tuple[int, int]:
    """Rebuild every hour overlapping [since, until). Returns (hours, rows).

    Each day's hours and then the day itself are rebuilt in one
    transaction: merging a day costs as much as rebuilding a few hours, so
    it is done once per day rather than after every hour, and no commit
    shows the day's new marks without its new daily rows. Hours are taken
    in order, so the latest (the one ingest writes to) is locked last and
    only briefly."""
    hours = hours_between(since, until)
    written = 0
    for day in sorted({floor_day(h) for h in hours}):
        with transaction.atomic():
            for hour in (h for h in hours if floor_day(h) == day):
                written += rebuild_hour(hour, daily=False)
            rebuild_day(day)
    return len(hours), written


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


def prune_raw(now: datetime | None = None) -> int:
    """Delete raw measurements older than the retention, in batches, after
    making sure every hour being deleted is rolled up; dead letters follow
    the same retention. Returns the number of measurements deleted."""
    from probes.models import HourlyRollup, Measurement, RollupHour

    now = now or datetime.now(UTC)
    cutoff = floor_hour(now - timedelta(days=settings.LATENCY_RETENTION_DAYS))
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT DISTINCT date_trunc('hour', started_at) FROM {Measurement._meta.db_table} WHERE started_at < %s",
            [cutoff],
        )
        raw_hours = {row[0] for row in cur.fetchall()}
    marked = set(RollupHour.objects.filter(hour__in=raw_hours).values_list("hour", flat=True))
    for hour in sorted(raw_hours - marked):
        rebuild_hour(hour)
    deleted = 0
    table = Measurement._meta.db_table
    while True:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(
                f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE started_at < %s LIMIT %s)",
                [cutoff, settings.LATENCY_PRUNE_BATCH],
            )
            n = cur.rowcount
        deleted += n
        if n < settings.LATENCY_PRUNE_BATCH:
            break
    from probes import deadletters

    letters = deadletters.prune(cutoff)
    if letters:
        log.info("pruned %d dead letters received before %s", letters, cutoff.isoformat())
    if settings.LATENCY_ROLLUP_RETENTION_DAYS:
        from probes.models import DailyRollup

        old = floor_hour(now - timedelta(days=settings.LATENCY_ROLLUP_RETENTION_DAYS))
        HourlyRollup.objects.filter(hour__lt=old).delete()
        RollupHour.objects.filter(hour__lt=old).delete()
        # Only days wholly before the cut: the day straddling it loses some
        # marks, so readers stop using its daily row anyway.
        DailyRollup.objects.filter(day__lte=old - DAY).delete()
    return deleted


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


@dataclass
class Coverage:
    """Where each part of a window is read from."""

    since: datetime
    until: datetime
    # Complete days wholly inside the window, all 24 hours marked.
    days: list[datetime] = field(default_factory=list)
    # Other marked hours wholly inside the window.
    hours: list[datetime] = field(default_factory=list)
    # The rest, read from raw rows.
    raw: list[tuple[datetime, datetime]] = field(default_factory=list)
    # built_at of every marked hour inside the window.
    built: dict[datetime, datetime] = field(default_factory=dict)

    @property
    def covered_hours(self) -> set[datetime]:
        covered = set(self.hours)
        for day in self.days:
            covered.update(day + HOUR * i for i in range(24))
        return covered

    def fingerprint(self, hours: Iterable[datetime] | None = None) -> bytes:
        """Identifies the content of the rollups of some marked hours (all
        covered ones by default). Rollups change only in rebuild_hour, which
        stamps the hour's mark with a new built_at in the same transaction,
        and a day's rollups only with one of its hours; so equal
        fingerprints mean equal rollups."""
        digest = hashlib.blake2b(digest_size=16)
        for hour in sorted(self.covered_hours if hours is None else hours):
            digest.update(f"{hour.isoformat()}={self.built[hour].isoformat()};".encode())
        return digest.digest()


def coverage(since: datetime, until: datetime, *, rollups: bool = True, daily: bool = True) -> Coverage:
    """Plan a reading of [since, until): which complete days come from
    DailyRollup, which hours from HourlyRollup, and which intervals from raw
    rows. A day is used only when all 24 of its hours are marked, because a
    late row unmarks its hour without touching the daily row."""
    from probes.models import RollupHour

    plan = Coverage(since=since, until=until)
    first, end = ceil_hour(since), floor_hour(until)
    if rollups and first < end:
        plan.built = dict(RollupHour.objects.filter(hour__gte=first, hour__lt=end).values_list("hour", "built_at"))
        marked = set(plan.built)
        if daily:
            day = floor_day(first)
            if day < first:
                day += DAY
            while day + DAY <= end:
                hours = {day + HOUR * i for i in range(24)}
                if hours <= marked:
                    plan.days.append(day)
                    marked -= hours
                day += DAY
        plan.hours = sorted(marked)
    plan.raw = raw_intervals(since, until, plan.covered_hours)
    return plan


def _in(column: str, values: list | None, params: list) -> str:
    if not values:
        return ""
    params.append(list(values))
    return f" AND {column} = ANY(%s)"


def _rollup_rows_sql(plan: Coverage, columns: list[str], narrow: dict[str, list | None]) -> tuple[str, list]:
    """One UNION ALL over the hourly and daily rollup rows a plan uses."""
    from probes.models import DailyRollup, HourlyRollup

    parts, params = [], []
    select = ", ".join(columns)
    if plan.hours:
        runs = hour_runs(plan.hours)
        where = " OR ".join(["(hour >= %s AND hour < %s)"] * len(runs))
        for a, b in runs:
            params.extend([a, b])
        sql = f"SELECT {select} FROM {HourlyRollup._meta.db_table} WHERE ({where})"
        for column, values in narrow.items():
            sql += _in(column, values, params)
        parts.append(sql)
    if plan.days:
        params.append(list(plan.days))
        sql = f"SELECT {select} FROM {DailyRollup._meta.db_table} WHERE day = ANY(%s)"
        for column, values in narrow.items():
            sql += _in(column, values, params)
        parts.append(sql)
    return " UNION ALL ".join(parts), params


def rollup_counts(
    plan: Coverage, group_by: tuple[str, ...], narrow: dict[str, list | None], metrics: Iterable[str]
) -> tuple[dict[tuple, list], dict[tuple, dict[str, dict[int, int]]]]:
    """Merged counts of the rollup rows a plan uses, per group: totals
    [samples, errors, tokens_per_s_sum, tokens_per_s_count] and, per metric,
    histogram bucket counts. Summed in SQL, so Python never parses the JSON
    of hundreds of rows: only one (group, metric, bucket) row comes back per
    occupied bucket."""
    totals: dict[tuple, list] = {}
    buckets: dict[tuple, dict[str, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    if not (plan.hours or plan.days):
        return totals, buckets
    metrics = list(metrics)
    g = ", ".join(group_by)
    n = len(group_by)
    rows_sql, params = _rollup_rows_sql(
        plan, [*group_by, "samples", "errors", "tokens_per_s_sum", "tokens_per_s_count"], narrow
    )
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {g}, sum(samples), sum(errors), sum(tokens_per_s_sum), sum(tokens_per_s_count) "
            f"FROM ({rows_sql}) r GROUP BY {g}",
            params,
        )
        for rec in cur.fetchall():
            totals[tuple(rec[:n])] = [int(rec[n]), int(rec[n + 1]), float(rec[n + 2] or 0.0), int(rec[n + 3])]
        if metrics:
            rows_sql, params = _rollup_rows_sql(plan, [*group_by, *[f"{m}_hist" for m in metrics]], narrow)
            pairs = ", ".join(f"('{m}', r.{m}_hist)" for m in metrics)
            cur.execute(
                f"SELECT {', '.join('r.' + c for c in group_by)}, m.metric, e.key::int, sum(e.value::bigint)::bigint "
                f"FROM ({rows_sql}) r "
                f"CROSS JOIN LATERAL (VALUES {pairs}) AS m(metric, hist) "
                "CROSS JOIN LATERAL jsonb_each_text(m.hist) e "
                f"GROUP BY {', '.join('r.' + c for c in group_by)}, m.metric, e.key",
                params,
            )
            for rec in cur.fetchall():
                metric, index, count = rec[n:]
                buckets[tuple(rec[:n])][metric][index] = count
    return totals, buckets


class MergeCache:
    """A small in-process LRU of merged rollup parts, bounded by a weight
    (histogram buckets held). Keys must carry a Coverage.fingerprint: the
    dashboard re-reads the same weeks of rollups on every refresh, and they
    only change when an hour is rebuilt, which changes the fingerprint."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key, value, weight: int = 1) -> None:
        if weight > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._items[key] = (value, weight)
            self._weight += weight
            while self._weight > self.budget:
                _, (_, w) = self._items.popitem(last=False)
                self._weight -= w

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0


# About 50 MB of histogram buckets at most.
merge_cache = MergeCache(budget=500_000)


@contextmanager
def reporting_reads() -> Iterator[None]:
    """Run dashboard reads with PostgreSQL's JIT off. Histogram merges are
    estimated expensive enough to trigger it, and compiling costs ~50 ms per
    query, more than the queries themselves gain from it."""
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SET LOCAL jit = off")
        yield


class Reading:
    """Merged statistics of one group over a window."""

    __slots__ = ("errors", "hists", "samples", "tps_count", "tps_sum", "values")

    def __init__(self) -> None:
        self.samples = 0
        self.errors = 0
        self.hists = {m: Histogram() for m in METRICS}
        self.tps_sum = 0.0
        self.tps_count = 0
        # Raw values by column, only for the columns read_window was asked
        # to keep (raw_values=...), and only from raw rows.
        self.values: dict[str, list[float]] = {}

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None

    @property
    def tokens_per_s_mean(self) -> float | None:
        return self.tps_sum / self.tps_count if self.tps_count else None


def read_window(
    since: datetime,
    until: datetime,
    *,
    group_by: tuple[str, ...] = ("region_id",),
    target_ids: list[int] | None = None,
    probe_ids: list[int] | None = None,
    region_ids: list[int] | None = None,
    metrics: Iterable[str] = METRICS,
    rollups: bool = True,
    raw_values: Iterable[str] = (),
    cache: bool = False,
) -> dict[tuple, Reading]:
    """Merged histograms per group over [since, until): daily rollups for the
    complete days inside the window whose 24 hours are all marked, hourly
    rollups for the other marked hours inside it, raw rows for the rest.

    metrics: the histograms to fill (the others stay empty); asking for
    fewer reads fewer columns. rollups=False reads raw rows only.
    raw_values: columns of RAW_VALUE_COLUMNS whose raw values each Reading
    keeps in .values, for exact statistics; only allowed with rollups=False,
    since rollups keep no values.
    cache: keep the merged rollup part in merge_cache and reuse it while
    the rollups it came from are unchanged (raw rows are always read)."""
    allowed = {"region_id", "target_id", "probe_id"}
    if not set(group_by) <= allowed:
        raise ValueError(f"group_by must use {sorted(allowed)}")
    metrics = tuple(metrics)
    if not set(metrics) <= set(METRICS):
        raise ValueError(f"metrics must be among {METRICS}")
    raw_values = tuple(raw_values)
    if not set(raw_values) <= set(RAW_VALUE_COLUMNS):
        raise ValueError(f"raw_values must be among {RAW_VALUE_COLUMNS}")
    if raw_values and rollups:
        raise ValueError("raw_values needs rollups=False: rollups keep histograms, not values")

    narrow = {"target_id": target_ids, "probe_id": probe_ids, "region_id": region_ids}
    out: dict[tuple, Reading] = defaultdict(Reading)
    with reporting_reads():
        plan = coverage(since, until, rollups=rollups)
        # Days and loose hours are merged (and cached) apart: the hours at a
        # sliding window's edges change every hour, the days once a day.
        parts = [
            Coverage(since=since, until=until, days=plan.days, built=plan.built),
            Coverage(since=since, until=until, hours=plan.hours, built=plan.built),
        ]
        for part in parts:
            if not (part.days or part.hours):
                continue
            merged = key = None
            if cache:
                scope = tuple((name, tuple(values or ())) for name, values in narrow.items())
                key = ("window", group_by, scope, metrics, tuple(part.days), tuple(part.hours), part.fingerprint())
                merged = merge_cache.get(key)
            if merged is None:
                totals, buckets = rollup_counts(part, group_by, narrow, metrics)
                merged = {
                    group: (tuple(t), {m: Histogram(c) for m, c in buckets.get(group, {}).items()})
                    for group, t in totals.items()
                }
                if key is not None:
                    merge_cache.put(key, merged, weight=1 + sum(len(c) for b in buckets.values() for c in b.values()))
            for group, ((samples, errors, tps_sum, tps_count), hists) in merged.items():
                r = out[group]
                r.samples += samples
                r.errors += errors
                r.tps_sum += tps_sum
                r.tps_count += tps_count
                for metric, hist in hists.items():
                    # Into the reading's own histogram: the cached one is shared.
                    r.hists[metric].merge(hist)
        if plan.raw:
            read_raw(out, plan.raw, group_by, narrow, metrics, raw_values)
    return dict(out)


def read_raw(
    out: dict[tuple, Reading],
    intervals: list[tuple[datetime, datetime]],
    group_by: tuple[str, ...],
    narrow: dict[str, list | None],
    metrics: tuple[str, ...],
    raw_values: tuple[str, ...] = (),
) -> None:
    """Add the raw rows of the given intervals to the readings in `out`."""
    from probes.models import Measurement

    q = Q(pk__in=[])
    for a, b in intervals:
        q |= Q(started_at__gte=a, started_at__lt=b)
    qs = Measurement.objects.filter(q)
    for column, values in narrow.items():
        if values:
            qs = qs.filter(**{f"{column}__in": values})
    columns = [METRIC_COLUMNS[m] for m in metrics]
    n = len(group_by)
    kept = [(i, name) for i, name in enumerate(raw_values)]
    for rec in qs.values_list(*group_by, "outcome", "tokens_per_s", *columns, *raw_values).iterator(chunk_size=5000):
        r = out[rec[:n]]
        outcome, tps = rec[n], rec[n + 1]
        r.samples += 1
        if outcome != "ok":
            r.errors += 1
        if tps is not None:
            r.tps_sum += tps
            r.tps_count += 1
        base = n + 2
        for i, metric in enumerate(metrics):
            value = rec[base + i]
            if value is not None:
                r.hists[metric].add(value)
        base += len(metrics)
        for i, name in kept:
            value = rec[base + i]
            if value is not None:
                r.values.setdefault(name, []).append(value)
