"""regions.csv: per bucket x region x target, samples, errors and
nearest-rank percentiles.

Two sources, chosen per export:
- raw rows, in one SQL statement streamed with COPY (percentile_disc is the
  nearest-rank percentile, exact): for 5-minute buckets, which no rollup
  serves, and whenever outcomes are filtered, since rollups count
  histograms over every outcome;
- otherwise probes.rollups.read_window per bucket, which reads daily and
  hourly rollups for the marked periods inside the bucket and raw rows for
  the rest, merging histograms (never averaging percentiles).

Buckets are aligned to UTC hours and days; the first and last ones hold
only the part inside [since, until), and bucket `all` is one bucket
labelled with `since`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

from asgiref.sync import sync_to_async
from psycopg import sql

from latency.stats import PERCENTILES
from probes.exports import BUCKETS, ExportFilters
from probes.exports.csvsafe import header_line, neutralise, safe_text, utc_iso
from probes.exports.measurements import where_clause
from probes.exports.pgcopy import copy_csv
from probes.models import Region, Target
from probes.rollups import floor_day, floor_hour, read_window

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
REGION_METRICS = ("ttft", "ttfat", "ttfb", "connect", "total")
# The dashboard's percentiles, one set for the whole product.
REGION_PERCENTILES = PERCENTILES
REGION_COLUMNS = (
    "bucket_start",
    "region",
    "region_city",
    "region_country",
    "target",
    "model",
    "samples",
    "errors",
    "error_rate",
    *(f"{m}_{p}_ms" for m in REGION_METRICS for p in REGION_PERCENTILES),
)


def uses_raw_rows(f: ExportFilters) -> bool:
    return f.bucket == "5m" or bool(f.outcomes)


def raw_select(f: ExportFilters) -> sql.Composed:
    """The whole export as one SELECT over raw rows."""
    if f.bucket == "all":
        bucket = sql.Literal(f.since)
    else:
        bucket = sql.SQL("date_bin({}, m.started_at, {})").format(sql.Literal(BUCKETS[f.bucket]), sql.Literal(EPOCH))
    fractions = sql.Literal(list(REGION_PERCENTILES.values()))
    percentiles = [
        sql.SQL("percentile_disc({}::float8[]) WITHIN GROUP (ORDER BY m.{}) AS {}").format(
            fractions, sql.Identifier(f"{metric}_ms"), sql.Identifier(metric)
        )
        for metric in REGION_METRICS
    ]
    picked = [
        sql.SQL("g.{}[{}]").format(sql.Identifier(metric), sql.Literal(i + 1))
        for metric in REGION_METRICS
        for i in range(len(REGION_PERCENTILES))
    ]
    return sql.SQL(
        "SELECT {label}, {slug}, {city}, {country}, {target}, {model}, g.samples, g.errors, "
        "g.errors::float8 / g.samples, {picked} "
        "FROM (SELECT {bucket} AS b, m.region_id, m.target_id, count(*) AS samples, "
        "count(*) FILTER (WHERE m.outcome <> 'ok') AS errors, {percentiles} "
        "FROM probes_measurement m WHERE {where} GROUP BY 1, 2, 3) g "
        "JOIN probes_region r ON r.id = g.region_id JOIN probes_target t ON t.id = g.target_id "
        "ORDER BY g.b, r.slug, t.name"
    ).format(
        label=utc_iso(sql.SQL("g.b")),
        slug=safe_text(sql.SQL("r.slug")),
        city=safe_text(sql.SQL("r.city")),
        country=safe_text(sql.SQL("r.country")),
        target=safe_text(sql.SQL("t.name")),
        model=safe_text(sql.SQL("t.model")),
        picked=sql.SQL(", ").join(picked),
        bucket=bucket,
        percentiles=sql.SQL(", ").join(percentiles),
        where=where_clause(f),
    )


def buckets(f: ExportFilters) -> Iterator[tuple[datetime, datetime, datetime]]:
    """(label, start, end) of each bucket, clipped to [since, until)."""
    if f.bucket == "all":
        yield f.since, f.since, f.until
        return
    size = BUCKETS[f.bucket]
    start = floor_hour(f.since) if f.bucket == "1h" else floor_day(f.since)
    while start < f.until:
        yield start, max(start, f.since), min(start + size, f.until)
        start += size


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _names(f: ExportFilters) -> tuple[dict, dict]:
    regions = {r["id"]: r for r in Region.objects.values("id", "slug", "city", "country")}
    targets = {t["id"]: t for t in Target.objects.values("id", "name", "model")}
    return regions, targets


def bucket_csv(f: ExportFilters, label: datetime, start: datetime, end: datetime, regions, targets) -> str:
    """CSV lines of one bucket read through the rollups (see module doc)."""
    readings = read_window(
        start,
        end,
        group_by=("region_id", "target_id"),
        target_ids=f.target_ids,
        probe_ids=f.probe_ids,
        region_ids=f.region_ids,
        metrics=REGION_METRICS,
        rollups=True,
    )
    rows = []
    for (region_id, target_id), r in readings.items():
        if not r.samples:
            continue
        region, target = regions[region_id], targets[target_id]
        row = [
            _iso(label),
            region["slug"],
            region["city"],
            region["country"],
            target["name"],
            target["model"],
            r.samples,
            r.errors,
            r.error_rate,
        ]
        row += [r.hists[m].percentile(q) for m in REGION_METRICS for q in REGION_PERCENTILES.values()]
        rows.append([neutralise(v) for v in row])
    rows.sort(key=lambda row: (row[1], row[4]))
    out = io.StringIO()
    # Same line ending as PostgreSQL's CSV, so both paths give the same bytes.
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


async def region_csv(f: ExportFilters) -> AsyncIterator[bytes]:
    yield header_line(REGION_COLUMNS)
    if uses_raw_rows(f):
        async for block in copy_csv(raw_select(f)):
            yield block
        return
    regions, targets = await sync_to_async(_names)(f)
    for label, start, end in buckets(f):
        text = await sync_to_async(bucket_csv)(f, label, start, end, regions, targets)
        if text:
            yield text.encode()
