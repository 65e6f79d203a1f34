"""regions.csv: per bucket x region x target, samples, errors and
nearest-rank percentiles, as probes.readings computes them (the same
numbers as the dashboard's for the same selection; where they come from and
how exact they are is said there, in probes.readings and its buckets.py).

This module only lays the rows out: names, timestamps, cells a spreadsheet
would not evaluate, and percentiles to SIGNIFICANT digits. The raw path is streamed with COPY (PostgreSQL formats
the rows), the rollup path is written bucket by bucket.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal

from asgiref.sync import sync_to_async
from psycopg import sql

from probes import readings
from probes.exports import BUCKETS, ExportFilters
from probes.exports.csvsafe import header_line, neutralise, safe_text, utc_iso
from probes.exports.pgcopy import copy_csv
from probes.metrics import REGION_CSV
from probes.models import Region, Target
from probes.readings.selection import PERCENTILES

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
    *(column for m in REGION_CSV for column in m.region_csv_columns()),
)


# Percentiles are written to 3 significant digits: that is what the merged
# histograms resolve (2% log buckets read at their midpoint, within 1% of the
# exact value, so a 4th digit would be noise), and the exact raw-row ones get
# the same rule, so a column's precision never depends on which path made it.
# Half away from zero, as PostgreSQL's round(numeric) does, and from the
# value's 15 significant digits, as PostgreSQL turns a float8 into numeric:
# the COPY path (significant_sql) and the Python path give the same bytes.
SIGNIFICANT = 3


def significant(value: float | None) -> str | None:
    """value to SIGNIFICANT digits, as plain decimal text ("312", "0.0123",
    "1230", "100.0"); None stays None (an empty cell)."""
    if value is None:
        return None
    number = Decimal(f"{value:.15g}")
    if not number:
        return "0"
    places = SIGNIFICANT - 1 - number.adjusted()
    return format(number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP), "f")


def significant_sql(expr: sql.Composable) -> sql.Composed:
    """significant() in SQL, for the COPY path."""
    return sql.SQL(
        "CASE WHEN {e} = 0 THEN 0::numeric "
        "ELSE round({e}::numeric, {digits} - 1 - floor(log(abs({e}::numeric)))::int) END"
    ).format(e=expr, digits=sql.Literal(SIGNIFICANT))


def selection(f: ExportFilters) -> readings.Selection:
    return readings.Selection(
        since=f.since,
        until=f.until,
        target_ids=f.target_ids,
        probe_ids=f.probe_ids,
        region_ids=f.region_ids,
        outcomes=f.outcomes,
    )


def uses_raw_rows(f: ExportFilters) -> bool:
    return readings.buckets_are_raw(selection(f), BUCKETS[f.bucket])


def raw_select(f: ExportFilters) -> sql.Composed:
    """The whole export as one SELECT: the readings' raw statement, named
    and formatted."""
    width = len(REGION_CSV) * len(REGION_PERCENTILES)
    values = sql.SQL(", ").join(significant_sql(sql.SQL("g.{}").format(sql.Identifier(f"v{i}"))) for i in range(width))
    names = sql.SQL(", ").join(
        sql.Identifier(name) for name in ("b", "region_id", "target_id", "samples", "errors", "error_rate")
    )
    columns = sql.SQL(", ").join([names, *(sql.Identifier(f"v{i}") for i in range(width))])
    return sql.SQL(
        "SELECT {label}, {slug}, {city}, {country}, {target}, {model}, g.samples, g.errors, g.error_rate, {values} "
        "FROM ({inner}) g ({columns}) "
        "JOIN probes_region r ON r.id = g.region_id JOIN probes_target t ON t.id = g.target_id "
        "ORDER BY g.b, r.slug, t.name"
    ).format(
        label=utc_iso(sql.SQL("g.b")),
        slug=safe_text(sql.SQL("r.slug")),
        city=safe_text(sql.SQL("r.city")),
        country=safe_text(sql.SQL("r.country")),
        target=safe_text(sql.SQL("t.name")),
        model=safe_text(sql.SQL("t.model")),
        values=values,
        inner=readings.bucket_statement(selection(f), BUCKETS[f.bucket]),
        columns=columns,
    )


def iso_text(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _names() -> tuple[dict, dict]:
    regions = {r["id"]: r for r in Region.objects.values("id", "slug", "city", "country")}
    targets = {t["id"]: t for t in Target.objects.values("id", "name", "model")}
    return regions, targets


def bucket_csv(f: readings.Selection, label: datetime, start: datetime, end: datetime, regions, targets) -> str:
    """CSV lines of one bucket read through the rollups."""
    rows = []
    for row in readings.bucket_rows(f, label, start, end):
        region, target = regions[row["region_id"]], targets[row["target_id"]]
        line = [
            iso_text(label),
            region["slug"],
            region["city"],
            region["country"],
            target["name"],
            target["model"],
            row["samples"],
            row["errors"],
            row["error_rate"],
        ]
        line += [significant(row["percentiles"][(m.name, p)]) for m in REGION_CSV for p in REGION_PERCENTILES]
        rows.append([neutralise(v) for v in line])
    rows.sort(key=lambda line: (line[1], line[4]))
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
    regions, targets = await sync_to_async(_names)()
    sel = selection(f)
    for label, start, end in readings.spans(sel, BUCKETS[f.bucket]):
        text = await sync_to_async(bucket_csv)(sel, label, start, end, regions, targets)
        if text:
            yield text.encode()
