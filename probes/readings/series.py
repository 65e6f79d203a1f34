"""The time series: p50, p95 and the chosen percentile of one metric per time
bucket and region, each placed where its bucket's data is.

Unlike the other figures it is planned per bucket (plan.series_plan): a
bucket made of whole marked hours is merged from hourly rollups (nearest
rank from the merged histogram, picked in SQL), any other from raw rows
(exact nearest rank, in SQL), never a mix.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.readings.cache import merge_cache
from probes.readings.plan import bucket_size as _bucket_size
from probes.readings.plan import coverage, ladder_tiles, reporting_reads, series_plan
from probes.readings.raw import raw_series
from probes.readings.rollup import region_series, rollup_series
from probes.readings.rows import SeriesRow
from probes.readings.selection import Selection
from probes.readings.summaries import _regions, _scope
from probes.rollups.periods import HOUR


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

    Raw-only windows, and buckets shorter than an hour, are grouped from raw
    rows in SQL (exact nearest rank; at is the mean started_at). Otherwise a
    bucket whose part inside the window is made of whole marked hours is
    merged from hourly rollups, or for every target from the region rollup
    blocks tiling it (at is the sample-weighted mean of the hours' midpoints
    either way), and any other bucket (the partial first and last ones, or
    one holding an hour not rolled up yet) is read from raw rows as a
    whole, so no bucket ever mixes a histogram with raw values. Rolled-up
    buckets are kept in probes.readings.cache under the fingerprint of their
    hours' marks."""
    size = bucket_size(f)
    targets, regions = _scope(f)
    found = []
    with reporting_reads():
        rolled: dict[datetime, list[datetime]] = {}
        raw_intervals = [(f.since, f.until)]
        if not f.raw_only and size % HOUR == timedelta(0):
            plan = coverage(f.since, f.until, daily=False)
            rolled, raw_intervals = series_plan(f.since, f.until, size, plan)
        if raw_intervals:
            found += raw_series(f.metric, f.percentile, size, raw_intervals, targets, regions)
        if rolled:
            # Every target: region rollups hold them all, whatever the ids.
            every = not f.target_ids
            scope = (f.metric, f.percentile, "every" if every else tuple(targets), tuple(regions), size)
            keys = {start: ("series", scope, start, plan.fingerprint(hours)) for start, hours in rolled.items()}
            missing = []
            for start, key in keys.items():
                cached = merge_cache.get(key)
                if cached is None:
                    missing.append(start)
                else:
                    found += cached
            if missing:
                if every:
                    # Each bucket's hours tiled by the region rollup blocks
                    # inside it: one 3 h or 12 h row per region and bucket
                    # instead of one per probe, region and hour.
                    blocks = [
                        tile
                        for start in missing
                        for tile in ladder_tiles(rolled[start][0], rolled[start][-1] + HOUR, rolled[start])
                    ]
                    computed = region_series(f.metric, f.percentile, size, blocks, regions)
                else:
                    computed = rollup_series(
                        f.metric, f.percentile, size, [h for start in missing for h in rolled[start]], targets, regions
                    )
                by_bucket: dict[datetime, list[tuple]] = {start: [] for start in missing}
                for row in computed:
                    by_bucket[row[0]].append(row)
                for start, bucket in by_bucket.items():
                    merge_cache.put(keys[start], bucket, weight=1 + len(bucket))
                found += computed
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
