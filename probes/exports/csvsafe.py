"""Cells a spreadsheet will not evaluate.

A cell starting with = + - @, a tab or a carriage return is read as a
formula by Excel and LibreOffice; target names, models and provider error
texts are typed by admins or written by providers, so such cells get a
leading single quote, as OWASP recommends. The rule is written once and
applied twice: in SQL for the COPY paths (safe_text) and in Python for rows
built here (neutralise), so both give the same bytes.
"""

from __future__ import annotations

from psycopg import sql

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


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
    """A timestamptz as ISO 8601 in UTC with microseconds, the same text whatever the session's zone."""
    return sql.SQL("""to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')""").format(expr)


def header_line(columns: tuple[str, ...]) -> bytes:
    # Plain identifiers need no quoting; "\n" ends lines as PostgreSQL's CSV does.
    return (",".join(columns) + "\n").encode()


def csv_cell(expr: sql.Composable) -> sql.Composed:
    """A text cell as COPY's CSV writes it: in double quotes (its own doubled) when it holds a comma, a double
    quote, CR or LF; NULL as nothing."""
    return sql.SQL(
        "coalesce(CASE WHEN strpos({e}, ',') > 0 OR strpos({e}, '\"') > 0 OR strpos({e}, chr(10)) > 0 "
        "OR strpos({e}, chr(13)) > 0 THEN '\"' || replace({e}, '\"', '\"\"') || '\"' ELSE {e} END, '')"
    ).format(e=expr)
