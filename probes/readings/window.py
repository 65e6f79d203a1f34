"""read_window: merged statistics per group over a window, from the plan's
hourly rollups, series or region rollup blocks and raw rows together; the
one place the sources meet.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import numpy as np

from probes.histogram import BUCKETS, Histogram
from probes.metrics import HISTOGRAM_NAMES, METRICS
from probes.readings import side_by_side
from probes.readings.cache import merge_cache
from probes.readings.plan import (
    Coverage,
    complete_days,
    coverage,
    hour_tiles,
    hours_of,
    ladder_tiles,
    reporting_reads,
    series_tiles,
)
from probes.readings.raw import read_raw
from probes.readings.rollup import DENSE_GROUPS_MAX, RolledCounts, rollup_counts
from probes.readings.rows import Reading
from probes.readings.workload import probe_ids as workload_probes
from probes.rollups.catalogue import in_use

# Raw columns whose values a reading can keep as they are (exact statistics).
RAW_VALUE_COLUMNS = tuple(m.column for m in METRICS if m.kind == "float")


def read_window(
    since: datetime,
    until: datetime,
    *,
    group_by: tuple[str, ...] = ("region_id",),
    target_ids: list[int] | None = None,
    probe_ids: list[int] | None = None,
    region_ids: list[int] | None = None,
    metrics: Iterable[str] = HISTOGRAM_NAMES,
    rollups: bool = True,
    raw_values: Iterable[str] = (),
    cache: bool = False,
    every_target: bool = False,
    every_region: bool = False,
    workload: str = "",
) -> dict[tuple, Reading]:
    """Merged histograms per group over [since, until): series rollup blocks
    for runs of complete days (all 24 hours marked) inside the window
    (plan.series_tiles), series blocks of 3 h and 12 h for runs of the other
    marked hours, the other complete days' among them (plan.hour_tiles),
    hourly rollups for the rest of them, raw rows for the rest.

    metrics: the histograms to fill (the others stay empty); asking for
    fewer reads fewer columns. rollups=False reads raw rows only.
    raw_values: columns of RAW_VALUE_COLUMNS whose raw values each Reading
    keeps in .values, for exact statistics; only allowed with rollups=False,
    since rollups keep no values.
    cache: keep the merged rollup part in merge_cache and reuse it while
    the rollups it came from are unchanged (raw rows are always read).
    every_target: target_ids is every Target (a selection of "all"), so
    grouped by region alone and with no probe filter the marked hours are
    read from region rollups (a few rows per region, not one per probe,
    region and hour). every_region: region_ids is every Region, likewise.

    With either, the rollup rows are read with no condition on that
    column: every row's target and region are among them (foreign keys
    protect both), and the condition only kept the planner from the hour
    index (rollup_hour_covering), which reads about half the buffers for the
    hours of the table of every target. So are the raw rows with every_target
    (region_ids stays, for the index on region and started_at): bound to
    every target and region, a window's raw minutes walked the (target,
    region, started_at) index once per pair, several times the buffers of a
    walk by region and started_at alone. A raw read of one target
    keeps both conditions, so walks only that target's entries.

    workload: one workload's figures (probes.readings.workload: raw rows by
    their own workload, rollups by the probes that now have it, never region
    rollups); empty: every workload."""
    allowed = {"region_id", "target_id", "probe_id"}
    if not set(group_by) <= allowed:
        raise ValueError(f"group_by must use {sorted(allowed)}")
    metrics = tuple(metrics)
    if not set(metrics) <= set(HISTOGRAM_NAMES):
        raise ValueError(f"metrics must be among {HISTOGRAM_NAMES}")
    raw_values = tuple(raw_values)
    if not set(raw_values) <= set(RAW_VALUE_COLUMNS):
        raise ValueError(f"raw_values must be among {RAW_VALUE_COLUMNS}")
    if raw_values and rollups:
        raise ValueError("raw_values needs rollups=False: rollups keep histograms, not values")

    narrow: dict[str, list | None] = {
        "target_id": None if every_target else target_ids,
        "probe_id": probe_ids,
        "region_id": region_ids,
    }
    rolled_narrow: dict[str, list[int] | None] = {
        "target_id": None if every_target else target_ids,
        "probe_id": probe_ids,
        "region_id": None if every_region else region_ids,
    }
    # The rows a reading takes away from its first hour are those its rollups counted: narrowed as they are.
    minus_narrow = dict(narrow)
    if workload:
        rolled_narrow["probe_id"] = minus_narrow["probe_id"] = workload_probes(workload, probe_ids)
        narrow["workload"] = [workload]
    # No probe has the workload now: no rollup counts it (an empty list would narrow nothing), raw rows may.
    rolling = not workload or bool(rolled_narrow["probe_id"])
    with reporting_reads():
        plan = coverage(since, until, rollups=rollups, head=True)
        # Days (or blocks of a day and more) and loose hours (shorter blocks)
        # are merged (and cached) apart: the hours at a sliding window's
        # edges change every hour, the days once a day.
        if every_target and not probe_ids and not workload and group_by == ("region_id",) and in_use("region"):
            rolled_narrow = {"region_id": rolled_narrow["region_id"]}
            tiles = ladder_tiles(since, until, plan.covered_hours)
            parts = [
                Coverage(since=since, until=until, blocks=[t for t in tiles if t[0] >= 24], built=plan.built),
                Coverage(since=since, until=until, blocks=[t for t in tiles if t[0] < 24], built=plan.built),
            ]
        else:
            # Runs of complete days from series rollup blocks where built, the days left out of them from
            # their blocks inside a day (they change with the days, so they are read with them).
            days, hours = complete_days(plan.hours)
            spans, days = series_tiles(days)
            day_spans, day_hours = hour_tiles(hours_of(days))
            # And runs of the other hours from series blocks inside a day where built.
            hour_spans, hours = hour_tiles(hours)
            parts = [
                Coverage(since=since, until=until, hours=day_hours, spans=spans + day_spans, built=plan.built),
                Coverage(since=since, until=until, hours=hours, spans=hour_spans, built=plan.built),
            ]
        # Partial hours (the current one, mostly) from their rollups up to a cut, their tails among the raw
        # rows, and the hour the window starts in when read whole less its rows before the window: a part of
        # their own, since they change every few minutes.
        built = {h: at for h, (_, at) in plan.partial.items()}
        if plan.head:
            built[plan.head[0]] = plan.head[1]
        if built:
            parts.append(Coverage(since=since, until=until, hours=sorted(built), built=built))
        # Every part not in the cache, and the raw rows, are read side by side where the process allows
        # (side_by_side: the served web process); the raw rows first, on this thread, and there in two halves
        # (_halves) when they are long.
        merged_parts = []
        # The first job's result is the readings the others are merged into, so the raw part always has one,
        # even with no raw interval (it then reads nothing).
        raw = [*plan.raw, *plan.tails]
        halves = _halves(raw) if side_by_side.enabled() else [raw]
        jobs: list[Callable[[], Any]] = [
            partial(_raw_part, half, group_by, narrow, metrics, raw_values) for half in halves
        ]
        minus_intervals = plan.minus if rolling else []
        if minus_intervals:
            jobs.append(partial(_raw_part, minus_intervals, group_by, minus_narrow, metrics, ()))
        for part in parts:
            if not rolling or not (part.hours or part.blocks or part.spans):
                continue
            merged = key = None
            if cache:
                scope = tuple((name, tuple(values or ())) for name, values in rolled_narrow.items())
                periods = (tuple(part.hours), tuple(part.blocks), tuple(part.spans))
                key = ("window", group_by, scope, metrics, periods, part.fingerprint())
                merged = merge_cache.get(key)
            if merged is None:
                jobs.append(partial(_rolled_part, part, group_by, rolled_narrow, metrics, key))
            else:
                merged_parts.append(merged)
        out, *read_parts = side_by_side.run(jobs)
        for _ in halves[1:]:
            _add_raw(out, read_parts.pop(0))
        minus = read_parts.pop(0) if minus_intervals else {}
        _combine(out, [*merged_parts, *read_parts], minus, metrics)
    return dict(out)


def _combine(
    out: defaultdict[tuple, Reading], parts: list[RolledCounts], minus: dict[tuple, Reading], metrics: tuple[str, ...]
) -> None:
    """Add the rolled-up parts into the raw part's readings (out), and take away the rows of the first hour
    before the window (minus), which its rollups counted.

    Each metric whose parts are all dense is summed in one array, a row per group: the parts' arrays added
    row-wise, the raw rows' and the subtracted rows' few buckets into their rows, then a histogram per group
    over its row. Merging part by part made a new row of BUCKETS counts for every group at every part (thousands
    for the table of every target over 30 days); this makes one array per metric, in no more time. A metric with a
    part of per-group dicts
    is merged group by group."""
    if not parts and not minus:
        return
    index: dict[tuple, int] = {}
    for part in parts:
        for group in part.groups:
            index.setdefault(group, len(index))
    for group in (*out, *minus):
        index.setdefault(group, len(index))
    rows = [np.fromiter(map(index.__getitem__, part.groups), dtype=np.intp, count=len(part.groups)) for part in parts]
    totals = np.zeros((len(index), 2), dtype=np.int64)
    for part, at in zip(parts, rows, strict=True):
        _add_rows(totals, at, part.totals)
    readings = [out[group] for group in index]
    for r, (samples, errors) in zip(readings, totals.tolist(), strict=True):
        r.samples += samples
        r.errors += errors
    for metric in metrics:
        # As many groups as one part may hold dense at most (its size bound), else one by one.
        dense = len(index) <= DENSE_GROUPS_MAX
        if dense and all(isinstance(part.hists.get(metric), np.ndarray) or not part.groups for part in parts):
            _sum_dense(readings, index, parts, rows, minus, metric)
        else:
            _merge_one_by_one(out, parts, minus, metric)
    for group, less in minus.items():
        r = out[group]
        r.samples -= less.samples
        r.errors -= less.errors
        if not r.samples:
            del out[group]


def _sum_dense(
    readings: list[Reading],
    index: dict[tuple, int],
    parts: list[RolledCounts],
    rows: list[np.ndarray],
    minus: dict[tuple, Reading],
    metric: str,
) -> None:
    summed = np.zeros((len(index), BUCKETS), dtype=np.int64)
    for part, at in zip(parts, rows, strict=True):
        counts = part.hists.get(metric)
        if isinstance(counts, np.ndarray):  # _combine's check: every part with groups holds an array
            _add_rows(summed, at, counts)
    had = np.zeros(len(index), dtype=bool)
    for i, r in enumerate(readings):
        hist = r.hists.get(metric)
        if hist is not None:
            had[i] = True
            hist.add_to(summed[i])
    for group, less in minus.items():
        hist = less.hists.get(metric)
        if hist is not None and hist.count:
            row = summed[index[group]]
            hist.add_to(row, -1)
            if (row < 0).any():
                raise ValueError("cannot subtract counts a histogram does not hold")
    totals = summed.sum(axis=1)
    for i in np.flatnonzero(had | (totals > 0)).tolist():
        # Each reading's own histogram over its row (a view: summed is this read's own, never cached).
        readings[i].hists[metric] = Histogram.of_dense(summed[i], int(totals[i]))


def _add_rows(into: np.ndarray, at: np.ndarray, rows: np.ndarray) -> None:
    """into[at[i]] += rows[i] for every i (at names each row once). The first part's groups are the first rows
    of the index, in its order: added in place as a slice, with no copy out and back."""
    n = len(at)
    if n and at[0] == 0 and at[-1] == n - 1 and (n == 1 or bool((np.diff(at) == 1).all())):
        into[:n] += rows
    else:
        into[at] += rows


def _merge_one_by_one(
    out: defaultdict[tuple, Reading], parts: list[RolledCounts], minus: dict[tuple, Reading], metric: str
) -> None:
    for part in parts:
        counts = part.hists.get(metric)
        if counts is None:
            continue
        for group, c in zip(part.groups, counts, strict=True):
            hist = Histogram.of_sums(c) if isinstance(c, dict) else Histogram.of_dense(c)
            if hist.count:
                # Into the reading's own histogram: the part's may be a cached one's.
                out[group].hists[metric].merge(hist)
    for group, less in minus.items():
        taken = less.hists.get(metric)
        if taken is not None:
            out[group].hists[metric].subtract(taken)


# Raw intervals this long in all or longer are read as two halves side by side (_halves).
SPLIT_MIN = timedelta(minutes=30)


def _halves(intervals: list[tuple]) -> list[list[tuple]]:
    """The raw intervals as two lists of half their time each (an interval cut in two where the halves meet, a
    tail keeping its cut in both), when they last SPLIT_MIN or more in all; else as they are, in one list.

    Two statements on two connections use both cores where one statement uses one: PostgreSQL runs no
    aggregate of string_agg in parallel, and a long raw read (the phases of every target over an hour) spent
    most of its time in process waiting on its one statement."""
    total = sum((b - a for a, b, *_ in intervals), timedelta(0))
    if total < SPLIT_MIN:
        return [intervals]
    halves: list[list[tuple]] = [[], []]
    left = total / 2
    for a, b, *cut in intervals:
        if left <= timedelta(0):
            halves[1].append((a, b, *cut))
        elif b - a <= left:
            halves[0].append((a, b, *cut))
        else:
            halves[0].append((a, a + left, *cut))
            halves[1].append((a + left, b, *cut))
        left -= b - a
    return halves


def _add_raw(out: defaultdict[tuple, Reading], more: defaultdict[tuple, Reading]) -> None:
    """Add the readings of another stretch of raw rows to out: counts, histograms and kept values (each
    column's values ascending again, as read_raw leaves them)."""
    for group, reading in more.items():
        mine = out[group]
        mine.merge(reading)
        for column, values in reading.values.items():
            kept = mine.values.setdefault(column, [])
            kept.extend(values)
            # Two ascending runs: Timsort merges them in one pass.
            kept.sort()


def _raw_part(
    raw: list, group_by: tuple[str, ...], narrow: dict, metrics: tuple[str, ...], raw_values: tuple[str, ...]
) -> defaultdict[tuple, Reading]:
    out: defaultdict[tuple, Reading] = defaultdict(Reading)
    if raw:
        read_raw(out, raw, group_by, narrow, metrics, raw_values)
    return out


def _rolled_part(
    part: Coverage, group_by: tuple[str, ...], narrow: dict, metrics: tuple[str, ...], key: tuple | None
) -> RolledCounts:
    """A part's rollups merged per group, kept in merge_cache under key."""
    counted = rollup_counts(part, group_by, narrow, metrics)
    if key is not None:
        merge_cache.put(key, counted, weight=1 + counted.weight)
    return counted
