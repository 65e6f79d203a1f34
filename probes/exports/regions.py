"""regions.csv: per bucket x region x target, samples, errors and
nearest-rank percentiles, as probes.readings computes them (the same
numbers as the dashboard's for the same selection; where they come from and
how exact they are is said there, in probes.readings and its buckets.py).

This module only lays the rows out: names, timestamps, cells a spreadsheet
would not evaluate, and percentiles to SIGNIFICANT digits. Both paths are statements streamed with COPY
(PostgreSQL formats the rows): the raw one, and the rollup one (whose bytes are those of the per-bucket Python
writer it replaced, kept as devtools/regions_csv_reference.py for the tests), run on consecutive parts of the
buckets on LATENCY_EXPORT_READERS connections at once. Each bucket is read by one statement; two buckets in
different parts are read milliseconds apart rather than by one statement.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import replace
from datetime import UTC, datetime

from django.conf import settings
from psycopg import sql

from probes import readings
from probes.exports import BUCKETS, ExportFilters
from probes.exports.csvsafe import csv_cell, header_line, safe_text, utc_iso
from probes.exports.pgcopy import copy_csv, copy_csv_parts
from probes.metrics import REGION_CSV
from probes.readings.selection import PERCENTILES
from probes.significant import SIGNIFICANT, cells_sql, names_sql

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


def significant_sql(expr: sql.Composable) -> sql.Composed:
    """probes.significant.significant() in SQL, for the COPY path."""
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
        workload=f.workload,
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


def _python_float_text(errors: sql.Composable, samples: sql.Composable) -> sql.Composed:
    """errors / samples as Python's repr writes it (csv.writer's cells were made in Python before): PostgreSQL
    prints the same shortest digits, but 0 and 1 without Python's ".0"."""
    return sql.SQL("CASE WHEN {e} = 0 THEN '0.0' WHEN {e} = {s} THEN '1.0' ELSE ({e}::float8 / {s})::text END").format(
        e=errors, s=samples
    )


def rollup_select(f: ExportFilters) -> sql.Composed:
    """The whole export through the rollups as one SELECT (probes.readings.rolled_buckets) of one text column:
    a row per bucket, holding the bucket's CSV lines, quoted and ordered as Python's csv.writer wrote them bucket
    by bucket before: empty text as an empty cell, a cell with a comma, a double quote, CR or LF in double
    quotes, rows by bucket, then neutralised slug and target name in code-point order (COLLATE "C" on UTF-8
    bytes). Read with copy_csv_parts(lines=True).

    A bucket's lines in one row, not a row per line: PostgreSQL sends a message per row, and taking one in
    Python cost more than PostgreSQL's making it. Within a bucket the lines
    are ordered on one int8 (the bucket's place, then each region's and target's place in that order, from
    two tables of a few dozen rows, 21 bits each): PostgreSQL sorts a single integer key with its own
    comparator-free quicksort. A 1 h group made of one hourly rollup row writes the percentile cells stored on
    it (HourlyRollup.percentile_cells): made here, one expression per cell, they were a large share of the
    statement."""
    sel = selection(f)
    size = BUCKETS[f.bucket]
    # A group's percentile cells: as the rollup builder stored them (a whole 1 h group), or made here from the
    # bucket indexes of a merged one (probes.significant: the same text).
    ks = cells_sql([f"s.ks[{w + 1}]" for w in range(readings.ROLLED_WIDTH)], "(SELECT t FROM sig)")
    percentiles = sql.SQL("coalesce(s.cells, {})").format(sql.SQL(ks))
    label: sql.Composable = utc_iso(sql.SQL("s.b"))
    labels = sql.SQL("")
    place: sql.Composable = sql.SQL("0")  # a single bucket
    if size is not None:
        # Each bucket's label is made once and looked up by the bucket's place (name[], as sig), not formatted
        # again on each of its rows: to_char on every row was a visible share of the statement.
        first = readings.bucket_start(f.since, size)
        step = size.total_seconds()
        labels = sql.SQL(
            "labels AS (SELECT array_agg({g}::name ORDER BY g) AS t FROM generate_series({first}, {last}, {size}) g), "
        ).format(
            g=utc_iso(sql.SQL("g")),
            first=sql.Literal(first),
            last=sql.Literal(readings.bucket_start(f.until, size)),
            size=sql.Literal(size),
        )
        label = sql.SQL("(SELECT t FROM labels)[((date_part('epoch', s.b) - {origin}) / {step})::int + 1]").format(
            origin=sql.Literal(first.timestamp()), step=sql.Literal(step)
        )
        place = sql.SQL("(extract(epoch FROM g.b)::int8 - {origin}) / {step}").format(
            origin=sql.Literal(int(first.timestamp())), step=sql.Literal(int(step))
        )

    def text(expr: str) -> sql.Composed:
        return csv_cell(sql.SQL("NULLIF({}, '')").format(safe_text(sql.SQL(expr))))

    cells = sql.SQL(", ").join(
        [
            label,
            *(sql.SQL("s.{}").format(sql.Identifier(c)) for c in ("slug", "city", "country", "name", "model")),
            sql.SQL("s.samples::text"),
            sql.SQL("s.errors::text"),
            _python_float_text(sql.SQL("s.errors"), sql.SQL("s.samples")),
            percentiles,
        ]
    )
    # Names are made safe, and CSV cells, once per region and target, not once per row.
    return sql.SQL(
        "WITH sig AS (SELECT {sig} AS t), {labels}"
        "rs AS (SELECT id, {slug} AS slug, {city} AS city, {country} AS country, "
        'row_number() OVER (ORDER BY {slug_key} COLLATE "C", id) AS o FROM probes_region), '
        "ts AS (SELECT id, {target} AS name, {model} AS model, "
        'row_number() OVER (ORDER BY {name_key} COLLATE "C", id) AS o FROM probes_target) '
        "SELECT string_agg(concat_ws(',', {cells}), chr(10) ORDER BY s.k) || chr(10) "
        "FROM (SELECT ({place}) AS p, ((({place}) << 42) | (r.o << 21) | t.o) AS k, "
        "g.b, g.samples, g.errors, g.cells, g.ks, r.slug, r.city, r.country, t.name, t.model "
        "FROM ({inner}) g JOIN rs r ON r.id = g.region_id JOIN ts t ON t.id = g.target_id) s "
        "GROUP BY s.p ORDER BY s.p"
    ).format(
        sig=sql.SQL(names_sql()),
        slug_key=safe_text(sql.SQL("slug")),
        name_key=safe_text(sql.SQL("name")),
        labels=labels,
        place=place,
        slug=text("slug"),
        city=text("city"),
        country=text("country"),
        target=text("name"),
        model=text("model"),
        cells=cells,
        inner=readings.rollup_bucket_statement(sel, BUCKETS[f.bucket]),
    )


# The rollup statement sorts and hashes hundreds of thousands of narrow rows (30 days of hourly buckets of every
# region and target): in memory rather than in temporary files, on the export's own connection only.
ROLLUP_WORK_MEM = "256MB"


# Buckets per part at most when the rollup path reads in parts (LATENCY_EXPORT_READERS): small enough that an
# idle reader can hold a part ahead whole (pgcopy.AHEAD_BLOCKS), large enough that 30 days of hourly buckets
# are a handful of statements.
PART_BUCKETS = 48


def parts(f: ExportFilters, readers: int) -> list[ExportFilters]:
    """f cut at bucket starts into consecutive selections of at most PART_BUCKETS buckets, and into at least
    `readers` when it has that many: each bucket lies in one part, read and labelled there as in f, so the parts'
    rows one after the other are f's rows in f's order (they are ordered by bucket first)."""
    size = BUCKETS[f.bucket]
    if size is None or readers < 2:
        return [f]
    # Every bucket's start but the first's (which may be before since).
    starts = [start for _label, start, _end in readings.spans(selection(f), size)][1:]
    buckets = len(starts) + 1
    count = max(min(readers, buckets), -(-buckets // PART_BUCKETS))
    cuts = [starts[buckets * i // count - 1] for i in range(1, count)]
    bounds = [f.since, *cuts, f.until]
    return [replace(f, since=a, until=b) for a, b in itertools.pairwise(bounds)]


async def region_csv(f: ExportFilters) -> AsyncIterator[bytes]:
    yield header_line(REGION_COLUMNS)
    if uses_raw_rows(f):
        blocks = copy_csv(raw_select(f))
    else:
        # One COPY formats its rows on one core (probes.exports.pgcopy): parts on connections of their own
        # format side by side.
        selections = parts(f, settings.LATENCY_EXPORT_READERS)
        blocks = copy_csv_parts(
            [functools.partial(rollup_select, part) for part in selections],
            readers=settings.LATENCY_EXPORT_READERS,
            work_mem=ROLLUP_WORK_MEM,
            lines=True,
        )
    # Closed with the stream (the client went away), not whenever it is collected: it holds connections.
    async with aclosing(blocks):
        async for block in blocks:
            yield block
