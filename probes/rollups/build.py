"""Building rollups: an hour's HourlyRollup rows from its raw rows, a day's
DailyRollup rows from its hours, and the schedule's job over stale hours.

An hour is "rolled up" when a RollupHour mark says so; the mark is written in
the same transaction as the hour's rollups, and removed by ingest when a late
measurement lands in that hour. A day's DailyRollup rows are the merge of its
hourly rows, rebuilt in the same transaction as any of its hours, so a day
whose 24 hours are all marked can be read from one row per probe and region
(probes.readings decides what to read). Histograms are kept for the metrics
of probes.metrics with histogram=True; percentiles are read from merged
histograms, never averaged.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from django.db import connection, transaction

from probes.histogram import Histogram
from probes.metrics import HISTOGRAM, HISTOGRAM_NAMES
from probes.rollups.locks import lock_day, lock_hours
from probes.rollups.periods import DAY, HOUR, floor_day, floor_hour, hours_between

_DAILY_JSON_COLUMNS = ("outcomes", *(m.rollup_field for m in HISTOGRAM))


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
            (probe_id, target_id, region_id, day, samples, errors, updated_at, {", ".join(_DAILY_JSON_COLUMNS)})
        SELECT g.probe_id, g.target_id, g.region_id, %(day)s, g.samples, g.errors,
               %(now)s, {", ".join(merged(c) for c in _DAILY_JSON_COLUMNS)}
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
    HourlyRollup rows. Returns the number of rows written. Call it inside
    the transaction that changed the day's hourly rows (rebuild_hour does),
    so that no commit ever shows marked hours next to a stale day."""
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
    cols = ["probe_id", "region_id", "target_id", "outcome", *(m.column for m in HISTOGRAM)]
    with transaction.atomic():
        lock_hours([hour])
        groups: dict[tuple[int, int], dict] = {}
        rows = (
            Measurement.objects.filter(started_at__gte=hour, started_at__lt=hour + HOUR)
            .values_list(*cols)
            .iterator(chunk_size=5000)
        )
        for probe_id, region_id, target_id, outcome, *values in rows:
            g = groups.get((probe_id, region_id))
            if g is None:
                g = groups[(probe_id, region_id)] = {
                    "target_id": target_id,
                    "samples": 0,
                    "errors": 0,
                    "outcomes": defaultdict(int),
                    "hists": {m.name: Histogram() for m in HISTOGRAM},
                }
            g["samples"] += 1
            g["outcomes"][outcome] += 1
            if outcome != "ok":
                g["errors"] += 1
            for metric, value in zip(HISTOGRAM_NAMES, values, strict=True):
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
                    **{m.rollup_field: g["hists"][m.name].to_sparse() for m in HISTOGRAM},
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
