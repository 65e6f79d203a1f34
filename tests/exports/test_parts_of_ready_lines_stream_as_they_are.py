"""copy_csv_parts(lines=True) (probes.exports.pgcopy): each part's query returns blocks of ready CSV lines in one
text column, read with COPY's binary format, and the stream is those blocks' bytes exactly, part after part: UTF-8
beyond ASCII, commas, quotes and CR left as they are, a NULL block holding nothing, blocks far longer than a
stream block, and many small ones; the reader's connection serves the next part after each COPY. Real PostgreSQL
(the test database)."""

from __future__ import annotations

import pytest
from psycopg import sql

from probes.exports import pgcopy

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

# (text, count): the part's blocks, in order.
PARTS = [
    [('a,"b"\r\nÎle-de-France,日本\n', 1), (None, 1), ("x" * (3 * pgcopy.BLOCK) + "\n", 1)],
    [("short\n", 5000)],
    [("", 1), ("last line without its end", 1)],
]


def query(blocks: list[tuple[str | None, int]]) -> sql.Composed:
    rows = sql.SQL(" UNION ALL ").join(
        sql.SQL("SELECT {} || '' AS t, {} AS n, g FROM generate_series(1, {}) g").format(
            sql.Literal(text), sql.Literal(i), sql.Literal(count)
        )
        for i, (text, count) in enumerate(blocks)
    )
    return sql.SQL("SELECT t FROM ({}) b ORDER BY n, g").format(rows)


def expected() -> bytes:
    return "".join((text or "") * count for blocks in PARTS for text, count in blocks).encode()


@pytest.mark.parametrize("readers", [1, 2])
async def test_the_blocks_come_out_as_the_queries_made_them(readers):
    queries = [query(blocks) for blocks in PARTS]
    parts = [lambda q=q: q for q in queries]
    out = [b async for b in pgcopy.copy_csv_parts(parts, readers=readers, lines=True)]
    assert b"".join(out) == expected()
    assert all(len(block) <= 4 * pgcopy.BLOCK for block in out)
