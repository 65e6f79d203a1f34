"""COPY (query) TO STDOUT CSV, streamed block by block.

PostgreSQL formats the rows and Python only forwards bytes, so memory stays
bounded whatever the row count and throughput stays close to psql's. Each
export reads on connections of its own so a long download never holds
Django's. COPY cannot take bind parameters: queries reach here as
psycopg.sql compositions whose values psycopg quoted, never formatted
strings.

One COPY runs on one core: PostgreSQL formats every cell of its output in the
one backend, and cannot hand that to parallel workers. copy_csv_parts reads
consecutive parts of one export on several connections at once, so several
backends format it, and streams the parts in order.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import aclosing

import psycopg
from django.db import connections
from psycopg import sql
from psycopg.abc import Buffer

# Bytes per streamed block: large enough that per-chunk costs vanish, small
# enough that memory stays flat.
BLOCK = 256 * 1024
# Blocks a part read ahead of the stream may hold in memory before its reader
# waits (8 MB): what bounds an export's memory when it reads in parts.
AHEAD_BLOCKS = 32


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
    bytes, read by one reader (copy_csv_parts). The connection is closed when
    the generator is (the client went away). work_mem: for this connection's
    statement, when it sorts or hashes more than the server's default holds
    in memory."""
    async with aclosing(copy_csv_parts([lambda: query], readers=1, work_mem=work_mem)) as blocks:
        async for block in blocks:
            yield block


class _Stopped(Exception):
    """Raised in a reader thread whose stream was closed: leaving its COPY with an error cancels it."""


# COPY's binary format: this signature, then a flags field and a header extension of the length that follows it.
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def _rows(copy: psycopg.Copy) -> Iterator[Buffer]:
    """The messages of a COPY ... TO STDOUT as they come: a row each."""
    while data := copy.read():
        yield data


def _texts(copy: psycopg.Copy) -> Iterator[bytes]:
    """The values of a COPY ... (FORMAT binary) of one text column, as the bytes they are: each row a block of
    ready CSV lines (lines=True of copy_csv_parts). A NULL row holds no line."""
    pending = bytearray()
    started = ended = False
    # Read to the end of the COPY even past its trailer: only then is the connection free for the next statement.
    while data := copy.read():
        if ended:
            continue
        pending += data
        if not started:
            if len(pending) < len(_SIGNATURE) + 8:
                continue
            if not pending.startswith(_SIGNATURE):
                raise psycopg.DataError("COPY did not send its binary signature")
            extension = int.from_bytes(pending[len(_SIGNATURE) + 4 : len(_SIGNATURE) + 8], "big")
            del pending[: len(_SIGNATURE) + 8 + extension]
            started = True
        while len(pending) >= 2:
            fields = int.from_bytes(pending[:2], "big", signed=True)
            if fields == -1:  # the trailer
                ended = True
                break
            if fields != 1:
                raise psycopg.DataError(f"COPY sent {fields} fields a row, not one")
            if len(pending) < 6:
                break
            size = int.from_bytes(pending[2:6], "big", signed=True)
            if size < 0:
                del pending[:6]
                continue
            if len(pending) < 6 + size:
                break
            yield bytes(pending[6 : 6 + size])
            del pending[: 6 + size]


def _read_parts(
    parts: Sequence[Callable[[], sql.Composable]],
    first: int,
    step: int,
    work_mem: str | None,
    lines: bool,
    hand: Callable[[int, bytes | BaseException | None], None],
    room: threading.Semaphore,
    stop: threading.Event,
) -> None:
    """A reader thread: parts first, first + step, ... on one connection, each block handed on (hand) once there
    is room for it, then None; an error is handed on in place of the part it ended."""
    index = first

    def send(block: bytes) -> None:
        room.acquire()
        if stop.is_set():
            raise _Stopped
        hand(index, block)

    try:
        with psycopg.connect(**connection_params(), autocommit=True) as conn:
            conn.execute("SET jit = off")
            if work_mem is not None:
                conn.execute(sql.SQL("SET work_mem = {}").format(sql.Literal(work_mem)))
            form = sql.SQL("binary" if lines else "csv")
            for index in range(first, len(parts), step):
                statement = sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT {})").format(parts[index](), form)
                with conn.cursor() as cur, cur.copy(statement) as copy:
                    # PostgreSQL sends one message per row; passing each one on through the ASGI stack costs
                    # more than the row itself, so rows are gathered into blocks.
                    buffer = bytearray()
                    for data in _texts(copy) if lines else _rows(copy):
                        buffer += data
                        if len(buffer) >= BLOCK:
                            send(bytes(buffer))
                            buffer.clear()
                if buffer:
                    send(bytes(buffer))
                hand(index, None)
    except _Stopped:
        pass
    except Exception as exc:
        hand(index, exc)
    finally:
        # The parts' statements were made through Django's ORM in this thread.
        connections.close_all()


async def copy_csv_parts(
    parts: Sequence[Callable[[], sql.Composable]], *, readers: int, work_mem: str | None = None, lines: bool = False
) -> AsyncIterator[bytes]:
    """Yield the CSV of every part's query, part after part, as if read one after another, reading up
    to `readers` parts at once, each reader a thread with a connection of its own (reader r reads parts r,
    r + readers, ...). A part's query is made (synchronously) when its reader comes to it. The part being
    streamed is read as the client takes it; each reader reads ahead at most AHEAD_BLOCKS blocks, then waits.

    Threads, not the event loop: psycopg's async COPY costs more CPU per row than its sync one, and per row is what
    a COPY costs Python here (docs/benchmarks.md, "regions.csv"). An error in any part ends the stream with that
    error once the parts before it are out; closing the generator (the client went away) stops every reader, which
    cancels its COPY and closes its connection.

    lines=True: each part's query returns one text column whose values are blocks of CSV lines, made by the
    query, in order; they are read with COPY's binary format and streamed as they are. PostgreSQL sends a message
    per row, and reading one costs Python time under the GIL: a message per bucket rather than per CSV line
    makes that cost vanish."""
    loop = asyncio.get_running_loop()
    count = len(parts)
    queues: list[asyncio.Queue[bytes | BaseException | None]] = [asyncio.Queue() for _ in range(count)]
    stop = threading.Event()
    rooms = [threading.Semaphore(AHEAD_BLOCKS) for _ in range(min(readers, count))]

    def hand(index: int, item: bytes | BaseException | None) -> None:
        loop.call_soon_threadsafe(queues[index].put_nowait, item)

    def start(first: int, room: threading.Semaphore) -> asyncio.Future[None]:
        # A thread of its own rather than the loop's executor, which slow clients' readers waiting for room
        # could fill.
        ended: asyncio.Future[None] = loop.create_future()

        def run() -> None:
            try:
                _read_parts(parts, first, len(rooms), work_mem, lines, hand, room, stop)
            finally:
                loop.call_soon_threadsafe(ended.set_result, None)

        threading.Thread(target=run, name=f"export-reader-{first}", daemon=True).start()
        return ended

    done = [start(r, room) for r, room in enumerate(rooms)]
    try:
        for index, queue in enumerate(queues):
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                rooms[index % len(rooms)].release()
                yield item
    finally:
        stop.set()
        for room in rooms:
            # Wakes a reader waiting for room, to find it should stop.
            room.release()
        await asyncio.gather(*done)
