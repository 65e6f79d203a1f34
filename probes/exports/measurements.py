"""measurements.csv: one line per measurement, oldest first.

The same SELECT serves the site's /export/measurements.csv (a WHERE built
from ExportFilters) and the admin's "Export selected as CSV" (a WHERE naming
the changelist's selection), so the columns and their neutralisation are
the same by construction. Both WHEREs are psycopg compositions: COPY takes
no bind parameters, so every value is rendered client-side by psycopg's own
quoting, never by string formatting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import psycopg
from django.db import connections
from psycopg import sql

from probes import metrics
from probes.exports import ExportFilters
from probes.exports.csvsafe import header_line, safe_text, utc_iso
from probes.exports.pgcopy import copy_csv
from probes.readings.slots import started_in_literals
from probes.readings.workload import row_composed as workload_sql

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
    *metrics.APPENDED_CSV,
)
# Text columns an admin or a provider wrote: neutralised.
_TEXT = {
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
_JOINS = sql.SQL(
    "JOIN probes_probe p ON p.id = m.probe_id "
    "JOIN probes_target t ON t.id = m.target_id "
    "JOIN probes_region r ON r.id = m.region_id"
)


def where_clause(f: ExportFilters, alias: str = "m") -> sql.Composed:
    """The filters as a WHERE over probes_measurement `alias`."""
    a = sql.Identifier(alias)
    conds = started_in_literals(f.since, f.until, alias)
    for column, values in (
        ("target_id", f.target_ids),
        ("probe_id", f.probe_ids),
        ("region_id", f.region_ids),
        ("outcome", f.outcomes),
    ):
        if values:
            conds.append(sql.SQL("{}.{} = ANY({})").format(a, sql.Identifier(column), sql.Literal(list(values))))
    if f.workload:
        # A row by the workload it was sent with, NULL as short (probes.readings.workload).
        conds.append(sql.SQL("{} = {}").format(workload_sql(alias), sql.Literal(f.workload)))
    return sql.SQL(" AND ").join(conds)


def selection_where(queryset) -> sql.Composed:
    """WHERE m.id IN (the queryset), for the admin's "Export selected".

    The selection may be "all N matching rows" of a filtered changelist, so
    it stays a subquery run by PostgreSQL (never a list of ids through
    Python). Django's SQL text and its parameters are rendered into one
    statement by psycopg's ClientCursor.mogrify, on Django's own connection
    (its adapters, its encoding): mogrify reads the placeholders the way the
    driver does, so a literal percent sign in the text or a filter value
    holding %s or quotes is rendered as the server would have bound it.
    """
    text, params = queryset.order_by().values("pk").query.sql_with_params()
    wrapper = connections[queryset.db]
    wrapper.ensure_connection()
    rendered = psycopg.ClientCursor(wrapper.connection).mogrify(text, params)
    return sql.SQL("m.id IN ({})").format(sql.SQL(rendered))


def measurements_select(where: sql.Composable) -> sql.Composed:
    """The SELECT behind measurements.csv, one output column per
    MEASUREMENT_COLUMNS entry, oldest first."""
    exprs = []
    for column in MEASUREMENT_COLUMNS:
        if column == "measured_at":
            expr = utc_iso(sql.SQL("m.started_at"))
        elif column in _TEXT:
            expr = safe_text(sql.SQL(_TEXT[column]))
        else:
            expr = sql.SQL("m.") + sql.Identifier(column)
        exprs.append(sql.SQL("{} AS {}").format(expr, sql.Identifier(column)))
    return sql.SQL("SELECT {} FROM probes_measurement m {} WHERE {} ORDER BY m.started_at, m.id").format(
        sql.SQL(", ").join(exprs), _JOINS, where
    )


async def measurement_csv(where: sql.Composable) -> AsyncIterator[bytes]:
    """The header at once (before the database is even reached), then COPY's blocks."""
    yield header_line(MEASUREMENT_COLUMNS)
    # Closed with the stream (the client went away), not whenever it is collected: it holds a connection.
    async with aclosing(copy_csv(measurements_select(where))) as blocks:
        async for block in blocks:
            yield block


def filtered_csv(f: ExportFilters) -> AsyncIterator[bytes]:
    """measurements.csv for the site's filters."""
    return measurement_csv(where_clause(f))


def selection_csv(queryset) -> AsyncIterator[bytes]:
    """measurements.csv for an admin selection (call where Django's connection may be used: not in async code)."""
    return measurement_csv(selection_where(queryset))
