"""CSV exports: the columns, the filters, and the measurement query.

measurements.csv is produced by PostgreSQL itself (COPY ... TO STDOUT CSV)
on a connection of its own, streamed block by block: the server formats the
rows, Python only forwards bytes, so memory stays flat whatever the row
count and throughput stays close to psql's. COPY cannot take bind
parameters, so the filters are composed in as psycopg literals (quoted by
psycopg, never by string formatting).

Cells that a spreadsheet would read as a formula (starting with = + - @, a
tab or a carriage return) get a leading single quote, as OWASP recommends;
this is done in SQL for the COPY path and by neutralise() elsewhere, with
the same rule.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg
from django.db import connections
from psycopg import sql

from latency.stats import MAX_WINDOW, PERCENTILES, BadParameter, _aware, _single, _values, parse_ids, parse_region_ids
from probes import metrics
from probes.engine.result import OUTCOMES
from probes.models import Probe, Target
from probes.timeparse import parse_when

MEASUREMENT_COLUMNS = (
    "measured_at",
    "probe",
    "target",
    "api_style",
    "model",
    "region",
    "region_city",
    "region_country",
    "connection",
    "outcome",
    "http_status",
    # The metrics' own columns, in the order a call reaches them (probes.metrics).
    *(m.column for m in metrics.MEASUREMENT_CSV),
    "error",
)
REGION_METRICS = tuple(m.name for m in metrics.REGION_CSV)
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
    *(column for m in metrics.REGION_CSV for column in m.region_csv_columns()),
)
BUCKETS = {"5m": timedelta(minutes=5), "1h": timedelta(hours=1), "1d": timedelta(days=1), "all": None}
DEFAULT_BUCKET = "1h"
DEFAULT_RANGE = timedelta(hours=24)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Bytes per streamed block: large enough that per-chunk costs vanish, small
# enough that memory stays flat.
BLOCK = 256 * 1024


@dataclass
class ExportFilters:
    """Empty id/slug/outcome lists mean all; [since, until) is half-open."""

    since: datetime
    until: datetime
    target_ids: list[int] = field(default_factory=list)
    probe_ids: list[int] = field(default_factory=list)
    region_ids: list[int] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    bucket: str = DEFAULT_BUCKET


def _when(params, name: str, now: datetime) -> datetime | None:
    text = _single(params, name)
    if text is None:
        return None
    try:
        return parse_when(text, now)
    except ValueError as exc:
        raise BadParameter(name, f"{name}: {exc}") from None


def parse_export_filters(params, now: datetime) -> ExportFilters:
    """Filters from query parameters: target, probe (ids), region (slugs)
    and outcome, all repeatable; since and until (ISO 8601 or relative such
    as 24h; default the last 24 hours); bucket (regions.csv only). Raises
    BadParameter naming the parameter."""
    now = _aware(now)
    region_ids = parse_region_ids(params)
    outcomes = list(dict.fromkeys(_values(params, "outcome")))
    bad = [o for o in outcomes if o not in OUTCOMES]
    if bad:
        raise BadParameter("outcome", f"outcome must be one of {', '.join(OUTCOMES)}, got {bad[0]!r}")
    bucket = _single(params, "bucket") or DEFAULT_BUCKET
    if bucket not in BUCKETS:
        raise BadParameter("bucket", f"bucket must be one of {', '.join(BUCKETS)}")
    until = _when(params, "until", now) or now
    since = _when(params, "since", now) or until - DEFAULT_RANGE
    if since >= until:
        raise BadParameter("since", "since must be before until")
    if until - since > MAX_WINDOW:
        raise BadParameter("since", f"since: the range to until is longer than {MAX_WINDOW.days} days; choose a shorter one")
    return ExportFilters(
        since=since,
        until=until,
        target_ids=parse_ids(params, "target", Target),
        probe_ids=parse_ids(params, "probe", Probe),
        region_ids=region_ids,
        outcomes=outcomes,
        bucket=bucket,
    )


def neutralise(value):
    """A text cell a spreadsheet will not evaluate; other values as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_text(expr: sql.Composable) -> sql.Composed:
    """neutralise() in SQL."""
    # chr() rather than literal tab and CR characters, so the statement stays
    # on one line (psql's \\copy, logs).
    starts = sql.SQL(", ").join(
        sql.SQL("chr({})").format(sql.Literal(ord(c))) if c in "\t\r" else sql.Literal(c) for c in FORMULA_STARTS
    )
    return sql.SQL("CASE WHEN left({e}, 1) IN ({s}) THEN '''' || {e} ELSE {e} END").format(e=expr, s=starts)


def utc_iso(expr: sql.Composable) -> sql.Composed:
    return sql.SQL("""to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')""").format(expr)


def where_clause(f: ExportFilters, alias: str = "m") -> sql.Composed:
    a = sql.Identifier(alias)
    conds = [
        sql.SQL("{}.started_at >= {}").format(a, sql.Literal(f.since)),
        sql.SQL("{}.started_at < {}").format(a, sql.Literal(f.until)),
    ]
    for column, values in (
        ("target_id", f.target_ids),
        ("probe_id", f.probe_ids),
        ("region_id", f.region_ids),
        ("outcome", f.outcomes),
    ):
        if values:
            conds.append(sql.SQL("{}.{} = ANY({})").format(a, sql.Identifier(column), sql.Literal(list(values))))
    return sql.SQL(" AND ").join(conds)


_JOINS = sql.SQL(
    "JOIN probes_probe p ON p.id = m.probe_id "
    "JOIN probes_target t ON t.id = m.target_id "
    "JOIN probes_region r ON r.id = m.region_id"
)


def measurements_select(where: sql.Composable) -> sql.Composed:
    """The SELECT behind measurements.csv, one output column per
    MEASUREMENT_COLUMNS entry, oldest first."""
    text = {
        "probe": "p.name",
        "target": "t.name",
        "api_style": "t.api_style",
        "model": "t.model",
        "region": "r.slug",
        "region_city": "r.city",
        "region_country": "r.country",
        "connection": "m.connection",
        "outcome": "m.outcome",
        "error": "m.error",
    }
    exprs = []
    for column in MEASUREMENT_COLUMNS:
        if column == "measured_at":
            expr = utc_iso(sql.SQL("m.started_at"))
        elif column in text:
            expr = safe_text(sql.SQL(text[column]))
        else:
            expr = sql.SQL("m.") + sql.Identifier(column)
        exprs.append(sql.SQL("{} AS {}").format(expr, sql.Identifier(column)))
    return sql.SQL("SELECT {} FROM probes_measurement m {} WHERE {} ORDER BY m.started_at, m.id").format(
        sql.SQL(", ").join(exprs), _JOINS, where
    )


def header_line(columns: tuple[str, ...]) -> bytes:
    # Plain identifiers need no quoting; "\n" ends lines as PostgreSQL's CSV does.
    return (",".join(columns) + "\n").encode()


def connection_params() -> dict:
    """psycopg.connect() arguments for the default database, as Django
    would connect (the test database name included), minus Django's own
    cursor choice."""
    params = connections["default"].get_connection_params()
    for key in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(key, None)
    return params


async def copy_csv(query: sql.Composable) -> AsyncIterator[bytes]:
    """Yield COPY (query) TO STDOUT CSV output in PostgreSQL's own blocks,
    on a dedicated connection so a long export never holds Django's. The
    connection is closed when the generator is (the client went away)."""
    conn = await psycopg.AsyncConnection.connect(**connection_params(), autocommit=True)
    try:
        async with conn.cursor() as cur:
            # Reporting query over many rows: JIT compilation costs more than it gains here.
            await cur.execute("SET jit = off")
            statement = sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT csv)").format(query)
            async with cur.copy(statement) as copy:
                # PostgreSQL sends one message per row; passing each one on
                # through the ASGI stack costs more than the row itself, so
                # rows are gathered into blocks of about BLOCK bytes.
                buffer = bytearray()
                async for data in copy:
                    buffer += data
                    if len(buffer) >= BLOCK:
                        yield bytes(buffer)
                        buffer.clear()
                if buffer:
                    yield bytes(buffer)
    finally:
        await conn.close()


def stamp(when: datetime) -> str:
    return _aware(when).strftime("%Y%m%dT%H%MZ")


def filename(what: str, f: ExportFilters) -> str:
    return f"latency-{what}_{stamp(f.since)}_{stamp(f.until)}.csv"


def selection_where(queryset) -> sql.Composable:
    """WHERE m.id IN (the queryset), for the admin's "Export selected":
    Django's SQL for the selection (which may be "all N matching rows"),
    its parameters quoted by psycopg, so the ids never pass through Python."""
    text, params = queryset.order_by().values("pk").query.sql_with_params()
    if "%%" in text:  # an escaped percent sign: do not split on placeholders
        return sql.SQL("m.id = ANY({})").format(sql.Literal(list(queryset.values_list("pk", flat=True))))
    pieces = text.split("%s")
    parts: list[sql.Composable] = [sql.SQL("m.id IN (" + pieces[0])]
    for param, piece in zip(params, pieces[1:], strict=True):
        parts += [sql.Literal(param), sql.SQL(piece)]
    return sql.Composed([*parts, sql.SQL(")")])
