"""The time series: p50, p95 and the chosen percentile of one metric per time
bucket and region, each placed where its bucket's data is.

Unlike the other figures it is planned per bucket (plan.series_plan): a
bucket with marked hours is merged from their hourly (or region) rollups,
its other rows, if any, counted into the same histograms (nearest rank from
the merged histogram), and a bucket with none from raw rows
(exact nearest rank, in SQL).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

from probes.readings import side_by_side
from probes.readings.cache import merge_cache
from probes.readings.plan import (
    EPOCH,
    SeriesPlan,
    coverage,
    ladder_tiles,
    marked_tiles,
    merge_intervals,
    reporting_reads,
    series_plan,
)
from probes.readings.plan import bucket_size as _bucket_size
from probes.readings.raw import raw_series
from probes.readings.rollup import EVERY, SeriesNarrow, region_series, rollup_series
from probes.readings.rows import SeriesRow, TargetSeriesRow
from probes.readings.selection import Selection
from probes.readings.summaries import _regions, _scope, _targets
from probes.readings.window import SPLIT_MIN
from probes.readings.workload import probe_ids as workload_probes
from probes.rollups.catalogue import in_use
from probes.rollups.periods import HOUR, SERIES_HOUR_GRAINS


def bucket_size(f: Selection) -> timedelta:
    """The time-series step of a selection (see plan.bucket_size)."""
    return _bucket_size(f.window, f.since, f.until)


def _clip(at: datetime, start: datetime, size: timedelta, f: Selection, now: datetime) -> datetime:
    """A point's time, kept inside the part of its bucket that the window
    covers (and not in the future): a mean of hour midpoints could fall a
    few minutes outside it."""
    low = max(start, f.since)
    high = max(low, min(start + size, f.until, now))
    return min(max(at.astimezone(UTC), low), high)


def _rolled(
    f: Selection,
    size: timedelta,
    hours: dict[datetime, list[datetime]],
    raw: list[tuple],
    every: bool,
    targets: list[int],
    regions: list[int],
    partial: frozenset[datetime] = frozenset(),
    minus: list[tuple[datetime, datetime]] | None = None,
    narrow: SeriesNarrow = EVERY,
) -> list[tuple]:
    """The series rows of some buckets from their marked hours' rollups, plus
    the raw rows of `raw` counted into the same histograms (tails among them:
    (start, end, cut)). partial: the hours among `hours` read up to a cut
    (plan.Coverage.partial). minus: raw rows taken away (plan.SeriesPlan.minus). narrow: the selection's
    probes and workload (rollup.SeriesNarrow), never with every."""
    if every:
        # Each bucket's hours tiled by the region rollup blocks inside it: one
        # 3 h or 12 h row per region and bucket instead of one per probe,
        # region and hour. A partial hour is its own 1 h block, written with its
        # hourly rollups up to the same cut; a longer block holding it is read
        # only once all its hours are marked.
        blocks = []
        for marked in hours.values():
            whole = [h for h in marked if h not in partial]
            if whole:
                blocks += ladder_tiles(whole[0], whole[-1] + HOUR, whole)
            blocks += [(1, h) for h in marked if h in partial]
        return region_series(f.metric, f.percentile, size, blocks, regions, raw, minus or ())
    # Named targets: each bucket's whole hours tiled by the series blocks inside a day (3 h and 12 h) that fit
    # in a bucket, the rest (a partial hour among them) read from hourly rows. A probe re-pointed during a block
    # counts there under its latest hour's target, as in a window's ends and its blocks of days.
    flat = sorted(h for marked in hours.values() for h in marked)
    grains = tuple(g for g in SERIES_HOUR_GRAINS if size % (HOUR * g) == timedelta(0) and in_use("series_hours"))
    tiles: list[tuple[int, datetime]] = []
    if grains:
        tiles, loose = marked_tiles([h for h in flat if h not in partial], HOUR, grains)
        flat = sorted([*loose, *(h for h in flat if h in partial)])
    return rollup_series(f.metric, f.percentile, size, flat, targets, regions, raw, minus or (), tiles, narrow)


# Marked hours from which a time series' rolled-up buckets are read in two halves (_rolled_halves).
ROLLED_SPLIT_HOURS = 48


def _raw_halves(raw: list[tuple[datetime, datetime]], size: timedelta) -> list[list[tuple[datetime, datetime]]]:
    """A raw window of SPLIT_MIN or more as two, cut at the bucket boundary nearest below its middle, so that no
    bucket has rows on both sides and each half's rows are its buckets whole; read side by side (as read_window
    reads its raw halves) where the process allows, else as it is: the time series of every target over an hour
    groups every raw row of the hour, each bucket's values sorted for exact ranks, on one core otherwise."""
    if not side_by_side.enabled() or len(raw) != 1 or raw[0][1] - raw[0][0] < SPLIT_MIN:
        return [raw]
    since, until = raw[0]
    middle = since + (until - since) / 2
    cut = EPOCH + (middle - EPOCH) // size * size
    return [[(since, cut)], [(cut, until)]] if since < cut < until else [raw]


def _rolled_halves(missing: dict[datetime, list[datetime]]) -> list[dict[datetime, list[datetime]]]:
    """Rolled-up buckets of ROLLED_SPLIT_HOURS marked hours or more as two runs of whole buckets with about half
    the hours each, read side by side where the process allows (as _raw_halves), else as they are. A 30-day
    series of one target read from hourly rows merges thousands of them twice (totals, then histograms), most of
    its read on one core. Since it reads the series blocks inside a day instead, halves or not cost the same; they
    still halve a read that falls back to hourly rows."""
    hours = sum(map(len, missing.values()))
    if not side_by_side.enabled() or len(missing) < 2 or hours < ROLLED_SPLIT_HOURS:
        return [missing]
    starts = sorted(missing)
    half, counted, cut = hours / 2, 0, len(starts) - 1
    for i, start in enumerate(starts[:-1]):
        counted += len(missing[start])
        if counted >= half:
            cut = i + 1
            break
    return [{s: missing[s] for s in starts[:cut]}, {s: missing[s] for s in starts[cut:]}]


def series(f: Selection) -> list[SeriesRow]:
    """p50, p95 and the selection's percentile (value) of f.metric per time
    bucket and region (bucket_size(f)), buckets with data only, by region
    slug then time.

    Keys: bucket_start (aware UTC datetime, aligned to the bucket size, so
    the first may start before f.since), at (aware UTC datetime: where the
    bucket's data is, the mean time of its measurements, within the
    bucket's part inside the window; charts draw the point there), region
    (slug), region_name, p50, p95, value, samples (measurements, whatever
    their outcome; p50/p95/value are None when none has a value of the
    metric).

    Raw-only windows, buckets shorter than an hour and buckets without a
    marked hour are grouped from raw rows in SQL (exact nearest rank; at is
    the mean started_at). Any other bucket is merged from its marked hours'
    hourly rollups or the series blocks inside a day tiling them, or for every
    target from the region rollup blocks tiling them (at is the
    sample-weighted mean of the hours' midpoints), and the
    rest of its part inside the window (the partial first and last buckets,
    or one holding an hour not rolled up yet) is counted from raw rows into
    the same histograms, as read_window adds a window's raw edges: the last
    12-hour bucket of a 30-day series reads an hour or so of raw rows, not
    up to twelve. Buckets of marked hours
    alone are kept in probes.readings.cache under the fingerprint of their
    hours' marks."""
    size = bucket_size(f)
    targets, regions = _scope(f)
    # Every target: region rollups hold them all, whatever the ids; but every probe and workload too, so a
    # selection of probes or of a workload reads per-probe rollups (probes.readings.workload).
    every = not f.target_ids and not f.probe_ids and not f.workload and in_use("region")
    narrow = SeriesNarrow(
        probes=f.probe_ids or None,
        workload=f.workload,
        workload_probes=workload_probes(f.workload, f.probe_ids) if f.workload else None,
    )
    found = []
    with reporting_reads():
        sp = SeriesPlan(raw=[(f.since, f.until)])
        if not f.raw_only and size % HOUR == timedelta(0):
            plan = coverage(f.since, f.until, head=True)
            sp = series_plan(f.since, f.until, size, plan)
        missing: dict[datetime, list[datetime]] = {}
        keys = {}
        if sp.rolled:
            scope = (
                f.metric,
                f.percentile,
                "every" if every else tuple(targets),
                tuple(regions),
                size,
                tuple(narrow.rolled or ()) if narrow.rolled is not None else None,
            )
            keys = {start: ("series", scope, start, plan.fingerprint(hours)) for start, hours in sp.rolled.items()}
            for start, key in keys.items():
                cached = merge_cache.get(key)
                if cached is None:
                    missing[start] = sp.rolled[start]
                else:
                    found += cached
        # The raw buckets, the rolled-up ones not cached and the mixed ones are read side by side where the
        # process allows (side_by_side); the mixed are never cached: their raw rows are what changes between
        # two reads.
        jobs = {}
        raw_targets = None if every else targets
        for i, raw in enumerate(_raw_halves(sp.raw, size) if sp.raw else []):
            jobs[f"raw{i}"] = partial(
                raw_series, f.metric, f.percentile, size, raw, raw_targets, regions, narrow.probes, f.workload
            )
        for i, part in enumerate(_rolled_halves(missing) if missing else []):
            jobs[f"rolled{i}"] = partial(_rolled, f, size, part, [], every, targets, regions, narrow=narrow)
        if sp.mixed:
            hours = {start: marked for start, (marked, _) in sp.mixed.items()}
            raw = merge_intervals([part for _, parts in sp.mixed.values() for part in parts])
            jobs["mixed"] = partial(
                _rolled, f, size, hours, raw, every, targets, regions, frozenset(plan.partial), sp.minus, narrow
            )
        results = dict(zip(jobs, side_by_side.run(list(jobs.values())), strict=True))
        found += results.get("raw0", []) + results.get("raw1", [])
        if missing:
            by_bucket: dict[datetime, list[tuple]] = {start: [] for start in missing}
            rolled = results["rolled0"] + results.get("rolled1", [])
            for row in rolled:
                by_bucket[row[0]].append(row)
            for start, bucket in by_bucket.items():
                merge_cache.put(keys[start], bucket, weight=1 + len(bucket))
            found += rolled
        found += results.get("mixed", [])
    info = _regions({row[1] for row in found})
    now = datetime.now(UTC)
    rows: list[SeriesRow] = [
        {
            "bucket_start": b.astimezone(UTC),
            "at": _clip(at, b, size, f, now),
            "region": info[rid]["slug"],
            "region_name": info[rid]["name"],
            "p50": p50,
            "p95": p95,
            "value": value,
            "samples": int(samples),
        }
        for b, rid, samples, p50, p95, value, at in found
    ]
    rows.sort(key=lambda row: (row["region"], row["bucket_start"]))
    return rows


def series_by_target(f: Selection) -> list[TargetSeriesRow]:
    """series(f) per target: each target's own series (its buckets merged from its own rows and histograms
    only, so two targets never share a percentile), each row with target_id and target (its name), by target
    name then region slug then time. Targets without data in the window have no rows."""
    targets, _regions_scope = _scope(f)
    names = _targets(targets)
    rows: list[TargetSeriesRow] = []
    for target_id in sorted(names, key=lambda tid: (names[tid]["name"], tid)):
        for row in series(replace(f, target_ids=[target_id])):
            rows.append({**row, "target_id": target_id, "target": names[target_id]["name"]})
    return rows
