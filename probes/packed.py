"""How rollups store a histogram: its entries packed into bytes, and the SQL that forms, expands and merges them.

A histogram (probes.histogram.Histogram) is stored as its non-zero buckets in ascending index order, each one
6-byte entry: the bucket index as a big-endian 16-bit integer, then its count as a big-endian 32-bit one. The
empty histogram is no bytes. It replaced the sparse jsonb form ({"12": 3, "15": 1}) because reads were bound by
that form: PostgreSQL formats every number of a jsonb value as text on the way out and Python parses it back,
where numpy reads these bytes as they are; and an hourly row takes fewer pages (docs/benchmarks.md,
"Histograms"). SQL writes it with int2send and int4send (their binary
send forms are these very bytes) and reads it back with get_byte.

A count is at most 2,147,483,647 in one bucket of one row (int4send's range: a probe every second for 68 years);
forming a larger one is an error ("integer out of range"), never a wrong count.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

ENTRY = np.dtype([("index", ">u2"), ("count", ">u4")])
ENTRY_BYTES = ENTRY.itemsize
MAX_COUNT = 2**31 - 1
# SQL for the empty histogram.
EMPTY_SQL = "''::bytea"


def pack(counts: Mapping[int, int] | Mapping[str, int]) -> bytes:
    """The stored form of bucket counts (int or Histogram.to_sparse's string keys): ascending, zeros left out."""
    entries = sorted((int(index), int(count)) for index, count in counts.items() if count)
    for index, count in entries:
        if not 0 <= index < 2**15 or not 0 < count <= MAX_COUNT:
            raise ValueError(f"a stored histogram holds bucket indexes in [0, 32768) and counts in (0, {MAX_COUNT}]")
    return np.array(entries, dtype=ENTRY).tobytes() if entries else b""


def unpack(data: bytes | memoryview | None) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indexes, counts) of stored histograms, as int64 arrays: of one, or of several stored one after
    another (SQL's string_agg over rows, which may repeat an index). None and b"" are no entries."""
    if not data:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(data) % ENTRY_BYTES:
        raise ValueError(f"a stored histogram is whole {ENTRY_BYTES}-byte entries, got {len(data)} bytes")
    entries = np.frombuffer(data, dtype=ENTRY)
    return entries["index"].astype(np.int64), entries["count"].astype(np.int64)


def sparse(data: bytes | memoryview | None) -> dict[str, int]:
    """A stored histogram as Histogram.to_sparse writes it: what the ORM reads (HistogramField)."""
    indexes, counts = unpack(data)
    return dict(zip(map(str, indexes.tolist()), counts.tolist(), strict=True))


def pack_agg(index: str, count: str, where: str | None = None) -> str:
    """SQL aggregate forming one stored histogram from rows of (bucket index, count), every index once; the
    empty histogram when no row passes `where`."""
    only = f" FILTER (WHERE {where})" if where else ""
    return (
        f"coalesce(string_agg(int2send(({index})::int2) || int4send(({count})::int4), {EMPTY_SQL} "
        f"ORDER BY {index}){only}, {EMPTY_SQL})"
    )


def entries_sql(column: str) -> str:
    """SQL for a LATERAL subquery: the (bucket int, n bigint) entries of one stored histogram `column`."""
    # The value is copied out once (|| in a subquery kept apart by OFFSET 0): get_byte on a value PostgreSQL
    # stored compressed or out of line decompresses the whole of it at every call, six calls an entry.
    return (
        "(SELECT (get_byte(d.h, o) << 8) | get_byte(d.h, o + 1) AS bucket, "
        "(get_byte(d.h, o + 2)::int8 << 24) | (get_byte(d.h, o + 3) << 16) | (get_byte(d.h, o + 4) << 8) "
        "| get_byte(d.h, o + 5) AS n "
        f"FROM (SELECT {column} || {EMPTY_SQL} AS h OFFSET 0) AS d "
        f"CROSS JOIN LATERAL generate_series(0, length(d.h) - {ENTRY_BYTES}, {ENTRY_BYTES}) AS o)"
    )
