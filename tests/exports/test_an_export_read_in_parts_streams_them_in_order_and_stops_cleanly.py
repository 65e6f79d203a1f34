"""copy_csv_parts (probes.exports.pgcopy) reads consecutive parts of one export on several connections at once and
streams them in order: the bytes are those of the parts read one after another; an error in a part ends the stream
after the parts before it; a stream closed early (the client went away) cancels every reader's COPY and closes its
connection; a reader reads ahead only as far as its room. Real PostgreSQL (the test database), parts several blocks
long."""

from __future__ import annotations

import threading

import psycopg
import pytest
from psycopg import sql

from probes.exports import pgcopy
from tests.support import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

PARTS = 7
ROWS = 3000  # about 640 KB a part: several blocks each
MARK = "parts-under-test"


def part(i: int, *, fail_at: int | None = None, rows: int = ROWS) -> sql.Composed:
    # A row the division makes fail, part way through the part, when fail_at is given.
    divisor = sql.SQL("1") if fail_at is None else sql.SQL("(n - {})").format(sql.Literal(fail_at))
    return sql.SQL(
        "SELECT {mark}::text AS mark, n, 1 / {divisor} AS one, repeat(chr(65 + n % 26), 200) AS pad "
        "FROM generate_series({first}, {last}) n"
    ).format(mark=sql.Literal(MARK), divisor=divisor, first=sql.Literal(i * rows), last=sql.Literal((i + 1) * rows - 1))


def one_after_another(queries: list[sql.Composed]) -> bytes:
    with psycopg.connect(**pgcopy.connection_params(), autocommit=True) as conn, conn.cursor() as cur:
        out = bytearray()
        for query in queries:
            with cur.copy(sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT csv)").format(query)) as copy:
                while data := copy.read():
                    out += data
        return bytes(out)


def copies_running() -> int:
    # Its own connection: the test runs in an event loop, where Django's ORM refuses to.
    with psycopg.connect(**pgcopy.connection_params(), autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND state = 'active' AND query LIKE %s",
            [f"COPY%{MARK}%"],
        ).fetchone()[0]


def readers_alive() -> int:
    return sum(t.name.startswith("export-reader") and t.is_alive() for t in threading.enumerate())


@pytest.mark.parametrize("readers", [1, 3])
async def test_the_parts_come_out_in_order_as_if_read_one_after_another(readers):
    queries = [part(i) for i in range(PARTS)]
    blocks = [b async for b in pgcopy.copy_csv_parts([lambda q=q: q for q in queries], readers=readers)]
    expected = one_after_another(queries)
    assert len(blocks) > PARTS  # several blocks a part
    assert b"".join(blocks) == expected
    assert expected.count(b"\n") == PARTS * ROWS


async def test_an_error_in_a_part_ends_the_stream_after_the_parts_before_it():
    queries = [part(i, fail_at=4 * ROWS + 2500 if i == 4 else None) for i in range(PARTS)]
    out = bytearray()
    with pytest.raises(psycopg.errors.DivisionByZero):
        async for block in pgcopy.copy_csv_parts([lambda q=q: q for q in queries], readers=3):
            out += block
    before = one_after_another(queries[:4])
    assert bytes(out[: len(before)]) == before
    # Nothing of a part after the failing one was streamed.
    assert f",{5 * ROWS},".encode() not in out
    wait_for(lambda: readers_alive() == 0, 30, 0.05, "the readers to end")


async def test_a_part_whose_query_cannot_be_made_ends_the_stream_with_that_error():
    def broken() -> sql.Composed:
        raise ValueError("no statement for this part")

    factories = [lambda: part(0), broken, lambda: part(2)]
    out = bytearray()
    with pytest.raises(ValueError, match="no statement for this part"):
        async for block in pgcopy.copy_csv_parts(factories, readers=2):
            out += block
    assert bytes(out) == one_after_another([part(0)])


async def test_readers_wait_for_room_and_a_stream_closed_early_cancels_every_copy(monkeypatch):
    # One block of room each: every reader stops part way through its part until the stream takes a block.
    monkeypatch.setattr(pgcopy, "AHEAD_BLOCKS", 1)
    # Parts far larger than the sockets' buffers (21 MB), so that a reader that stops reading stops its COPY.
    stream = pgcopy.copy_csv_parts([lambda i=i: part(i, rows=100_000) for i in range(PARTS)], readers=3)
    first = await anext(stream)
    assert first.startswith(f"{MARK},0,1,".encode())
    # Three statements still running, each held up by its reader (PostgreSQL makes a part in a fraction of a
    # second).
    wait_for(lambda: copies_running() == 3, 30, 0.05, "all three readers to wait in their COPY")
    await stream.aclose()
    wait_for(lambda: readers_alive() == 0, 30, 0.05, "the readers to end")
    wait_for(lambda: copies_running() == 0, 30, 0.05, "the readers' COPY statements to go")
