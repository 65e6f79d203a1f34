"""COPY (query) TO STDOUT CSV, streamed block by block.

PostgreSQL formats the rows and Python only forwards bytes, so memory stays
flat whatever the row count and throughput stays close to psql's. Each
export reads on a connection of its own so a long download never holds
Django's. COPY cannot take bind parameters: queries reach here as
psycopg.sql compositions whose values psycopg quoted, never formatted
strings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
from django.db import connections
from psycopg import sql

# Bytes per streamed block: large enough that per-chunk costs vanish, small
# enough that memory stays flat.
BLOCK = 256 * 1024


def connection_params() -> dict:
    """psycopg.connect() arguments for the default database, as Django
    would connect (the test database name included), minus Django's own
    cursor choice."""
    params = connections["default"].get_connection_params()
    for key in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(key, None)
    return params


async def copy_csv(query: sql.Composable, *, work_mem: str | None = None) -> AsyncIterator[bytes]:
    """Yield COPY (query) TO STDOUT CSV output in blocks of about BLOCK
    bytes. The connection is closed when the generator is (the client went
    away). work_mem: for this connection's statement, when it sorts or
    hashes more than the server's default holds in memory."""
    conn = await psycopg.AsyncConnection.connect(**connection_params(), autocommit=True)
    try:
        async with conn.cursor() as cur:
            # Reporting query over many rows: JIT compilation costs more than it gains here.
            await cur.execute("SET jit = off")
            if work_mem is not None:
                await cur.execute(sql.SQL("SET work_mem = {}").format(sql.Literal(work_mem)))
            statement = sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT csv)").format(query)
            async with cur.copy(statement) as copy:
                # PostgreSQL sends one message per row; passing each one on
                # through the ASGI stack costs more than the row itself, so
                # rows are gathered into blocks.
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
