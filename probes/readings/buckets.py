"""Statistics per time bucket x region x target over a selection: the rows
of regions.csv.

Two sources, chosen per selection by buckets_are_raw():
- raw rows, in one statement (raw.bucket_select, exact nearest rank) the
  export streams with COPY: for buckets shorter than an hour, which no
  rollup serves; whenever outcomes are filtered, since rollups count
  histograms over every outcome; and for a window of at most RAW_MAX, which
  the dashboard reads raw and exact too, so the CSV and the chart agree;
- otherwise hourly rollups for the marked hours inside each bucket and raw
  rows for the rest, merging histograms (never averaging
  percentiles), like the dashboard's long windows: every bucket in one
  statement (rollup_bucket_statement, see rolled_buckets.py) for the export,
  or one bucket at a time through read_window (bucket_rows: the reference
  the statement is tested against, and the rows as Python dicts).

Buckets are aligned to UTC hours and days; the first and last ones hold only
the part inside [since, until); size None is one bucket labelled `since`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from psycopg import sql

from probes.metrics import PERCENTILES, REGION_CSV
from probes.readings.plan import bucket_start
from probes.readings.raw import bucket_select
from probes.readings.rolled_buckets import cuts, marks, plan_buckets, rollup_bucket_select
from probes.readings.rows import BucketRow
from probes.readings.selection import RAW_MAX, Selection
from probes.readings.window import read_window
from probes.readings.workload import probe_ids as workload_probes
from probes.rollups.periods import HOUR


def buckets_are_raw(f: Selection, size: timedelta | None) -> bool:
    return (size is not None and size < HOUR) or bool(f.outcomes) or f.until - f.since <= RAW_MAX


def _narrow(f: Selection) -> dict[str, list]:
    return {
        "target_id": f.target_ids,
        "probe_id": f.probe_ids,
        "region_id": f.region_ids,
        "outcome": f.outcomes,
        # Raw rows by their own workload (probes.readings.workload).
        "workload": [f.workload] if f.workload else [],
    }


def bucket_statement(f: Selection, size: timedelta | None) -> sql.Composed:
    """The raw path: one SELECT (see raw.bucket_select for its columns)."""
    return bucket_select(f.since, f.until, size, _narrow(f))


def rollup_bucket_statement(f: Selection, size: timedelta | None) -> sql.Composed:
    """The rollup path in one SELECT (rolled_buckets.rollup_bucket_select: its columns, ROLLED_WIDTH bucket
    indexes), planned bucket by bucket as bucket_rows plans each (partial hours, and the first hour less its rows
    before the selection, too); reads the rollup marks and cuts once, and with a workload the probes that have it."""
    plan = plan_buckets(f, list(spans(f, size)), marks(f), cuts(f))
    # One workload's rollups: those of the probes that have it now (probes.readings.workload).
    rolled = workload_probes(f.workload, f.probe_ids) if f.workload else None
    return rollup_bucket_select(f, size, plan, rolled)


def spans(f: Selection, size: timedelta | None) -> Iterator[tuple[datetime, datetime, datetime]]:
    """(label, start, end) of each bucket, clipped to [since, until)."""
    if size is None:
        yield f.since, f.since, f.until
        return
    start = bucket_start(f.since, size)
    while start < f.until:
        yield start, max(start, f.since), min(start + size, f.until)
        start += size


def bucket_rows(f: Selection, label: datetime, start: datetime, end: datetime) -> list[BucketRow]:
    """The rollup path: the rows of one bucket, unordered."""
    readings = read_window(
        start,
        end,
        group_by=("region_id", "target_id"),
        target_ids=f.target_ids,
        probe_ids=f.probe_ids,
        region_ids=f.region_ids,
        metrics=[m.name for m in REGION_CSV],
        rollups=True,
        workload=f.workload,
    )
    return [
        BucketRow(
            bucket_start=label,
            region_id=region_id,
            target_id=target_id,
            samples=r.samples,
            errors=r.errors,
            error_rate=r.error_rate,
            percentiles={
                (m.name, p): r.hists[m.name].percentile(q) for m in REGION_CSV for p, q in PERCENTILES.items()
            },
        )
        for (region_id, target_id), r in readings.items()
        if r.samples
    ]
