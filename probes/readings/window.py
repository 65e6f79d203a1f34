"""read_window: merged statistics per group over a window, from the plan's
daily, hourly or region rollups and raw rows together; the one place the
sources meet.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from probes.histogram import Histogram
from probes.metrics import HISTOGRAM_NAMES, METRICS
from probes.readings import side_by_side
from probes.readings.cache import merge_cache
from probes.readings.plan import Coverage, coverage, hour_tiles, ladder_tiles, reporting_reads, series_tiles
from probes.readings.raw import read_raw
from probes.readings.rollup import rollup_counts
from probes.readings.rows import Reading

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
) -> dict[tuple, Reading]:
    """Merged histograms per group over [since, until): series rollup blocks
    for runs of complete days inside the window (plan.series_tiles), daily
    rollups for the other complete days (all 24 hours marked), series blocks
    of 3 h and 12 h for runs of the other marked hours (plan.hour_tiles),
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
    index (rollup_hour_covering): the hours of the table of every target
    over 7 d read 10,000 buffers by target and region and 4,900 by hour at
    10 M rows, 38 against 31 ms. So are the raw rows with every_target
    (region_ids stays, for the index on region and started_at): bound to 60
    targets and 15 regions, a window's 19 raw minutes at 100 M rows walked
    the (target, region, started_at) index 900 times, 3,492 buffers (1,716
    read from disk with the caches dropped, 163 ms), against 780 (737
    read, 86 ms) by region and started_at alone. A raw read of one target
    keeps both conditions, so walks only that target's entries."""
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

    narrow = {"target_id": None if every_target else target_ids, "probe_id": probe_ids, "region_id": region_ids}
    rolled_narrow: dict[str, list[int] | None] = {
        "target_id": None if every_target else target_ids,
        "probe_id": probe_ids,
        "region_id": None if every_region else region_ids,
    }
    with reporting_reads():
        plan = coverage(since, until, rollups=rollups, head=True)
        # Days (or blocks of a day and more) and loose hours (shorter blocks)
        # are merged (and cached) apart: the hours at a sliding window's
        # edges change every hour, the days once a day.
        if every_target and not probe_ids and group_by == ("region_id",):
            rolled_narrow = {"region_id": rolled_narrow["region_id"]}
            tiles = ladder_tiles(since, until, plan.covered_hours)
            parts = [
                Coverage(since=since, until=until, blocks=[t for t in tiles if t[0] >= 24], built=plan.built),
                Coverage(since=since, until=until, blocks=[t for t in tiles if t[0] < 24], built=plan.built),
            ]
        else:
            # Runs of complete days from series rollup blocks where built.
            spans, days = series_tiles(plan.days)
            # And runs of the other hours from series blocks inside a day where built.
            hour_spans, hours = hour_tiles(plan.hours)
            parts = [
                Coverage(since=since, until=until, days=days, spans=spans, built=plan.built),
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
        # (side_by_side: the served web process); the raw rows first, on this thread.
        merged_parts = []
        # The first job's result is the readings the others are merged into, so the raw part always has one,
        # even with no raw interval (it then reads nothing).
        raw = [*plan.raw, *plan.tails]
        jobs: list[Callable[[], Any]] = [partial(_raw_part, raw, group_by, narrow, metrics, raw_values)]
        if plan.minus:
            jobs.append(partial(_raw_part, plan.minus, group_by, narrow, metrics, ()))
        for part in parts:
            if not (part.days or part.hours or part.blocks or part.spans):
                continue
            merged = key = None
            if cache:
                scope = tuple((name, tuple(values or ())) for name, values in rolled_narrow.items())
                periods = (tuple(part.days), tuple(part.hours), tuple(part.blocks), tuple(part.spans))
                key = ("window", group_by, scope, metrics, periods, part.fingerprint())
                merged = merge_cache.get(key)
            if merged is None:
                jobs.append(partial(_rolled_part, part, group_by, rolled_narrow, metrics, key))
            else:
                merged_parts.append(merged)
        out, *read_parts = side_by_side.run(jobs)
        minus = read_parts.pop(0) if plan.minus else {}
        for merged in [*merged_parts, *read_parts]:
            for group, ((samples, errors), hists) in merged.items():
                r = out[group]
                r.samples += samples
                r.errors += errors
                for metric, hist in hists.items():
                    # Into the reading's own histogram: the cached one is shared.
                    r.hists[metric].merge(hist)
        # The rows of the first hour before the window, counted in its rollups, taken away again.
        for group, less in minus.items():
            r = out[group]
            r.samples -= less.samples
            r.errors -= less.errors
            for metric, hist in less.hists.items():
                r.hists[metric].subtract(hist)
            if not r.samples:
                del out[group]
    return dict(out)


def _raw_part(
    raw: list, group_by: tuple[str, ...], narrow: dict, metrics: tuple[str, ...], raw_values: tuple[str, ...]
) -> defaultdict[tuple, Reading]:
    out: defaultdict[tuple, Reading] = defaultdict(Reading)
    if raw:
        read_raw(out, raw, group_by, narrow, metrics, raw_values)
    return out


def _rolled_part(
    part: Coverage, group_by: tuple[str, ...], narrow: dict, metrics: tuple[str, ...], key: tuple | None
) -> dict[tuple, tuple[tuple, dict[str, Histogram]]]:
    """A part's rollups merged per group ((samples, errors), histograms), kept in merge_cache under key."""
    totals, buckets = rollup_counts(part, group_by, narrow, metrics)
    merged = {
        group: (tuple(t), {m: _histogram(c) for m, c in buckets.get(group, {}).items()}) for group, t in totals.items()
    }
    if key is not None:
        # Weighed by the buckets held, a dense row as a tenth of its length: its non-zero buckets are about a
        # hundred, but the row holds them all.
        weight = sum(len(c) if isinstance(c, dict) else len(c) // 10 for b in buckets.values() for c in b.values())
        merge_cache.put(key, merged, weight=1 + weight)
    return merged


def _histogram(counts: np.ndarray | dict[int, int]) -> Histogram:
    return Histogram.of_sums(counts) if isinstance(counts, dict) else Histogram.of_dense(counts)
