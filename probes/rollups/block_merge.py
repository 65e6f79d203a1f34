"""Merging rollup rows into blocks in Python with numpy: the region blocks (probes.rollups.ladder), the series blocks
of days (probes.rollups.series_blocks) and inside a day (probes.rollups.hour_blocks).

Why not in SQL: a stored histogram (probes.packed) is bytes, and SQL can only sum two of them bucket by bucket by
expanding every entry with get_byte and grouping the entries again. Here PostgreSQL only reads each block's rows, their
histograms one after another as readers read them (probes.readings.rollup), and sums the counts and the outcomes;
numpy sums the entries of all the blocks of a column at once (merged), and the rows go back with COPY. With the same
rows written to the byte, the series blocks of days (series_blocks.rebuild_series_range) and the region blocks of a
rebuild take a fraction of their time in SQL (docs/benchmarks.md, "Rollup builds").
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta

import numpy as np

from probes.histogram import BUCKETS
from probes.metrics import HISTOGRAM
from probes.packed import ENTRY, MAX_COUNT, unpack
from probes.rollups.periods import EPOCH

HIST_COLUMNS = tuple(str(m.rollup_field) for m in HISTOGRAM)
JSON_COLUMNS = ("outcomes", *HIST_COLUMNS)


def merge_blocks(
    cur,
    *,
    table: str,
    source: str,
    time_column: str,
    seconds: str | None,
    only: str,
    keys: tuple[str, ...],
    span_hours: int,
    a: datetime,
    b: datetime,
    now: datetime,
) -> int:
    """Insert into `table` the blocks of span_hours hours starting in [a, b), one per `keys` (a region; a probe,
    region and target for the series blocks), each the merge of the `source` rows (alias s) whose `time_column`
    falls in it and that pass `only` (the finer grain of a block table, or TRUE). `seconds`: the source's SQL
    expression of samples x hour midpoint, summed into sample_seconds (None: the table keeps none). The caller has
    deleted the blocks it replaces. Returns the rows written."""
    span = timedelta(hours=span_hours)
    params = {"span": span, "epoch": EPOCH, "a": a, "b": b}
    source_keys = ", ".join(f"s.{k}" for k in keys)
    block = f"date_bin(%(span)s, s.{time_column}, %(epoch)s)"
    where = f"{only} AND s.{time_column} >= %(a)s AND s.{time_column} < %(b)s"
    positions = ", ".join(str(i) for i in range(1, len(keys) + 2))
    seconds_sum = f", sum({seconds})" if seconds else ""
    histograms = ", ".join(f"string_agg(s.{c}, ''::bytea)" for c in HIST_COLUMNS)
    # Ordered by block, then keys: the rows are stored in this order, a block's rows together, as readers ask for
    # them (every series or region of a few blocks).
    block_first = ", ".join([str(len(keys) + 1), *(str(i) for i in range(1, len(keys) + 1))])
    cur.execute(
        f"SELECT {source_keys}, {block}, sum(s.samples), sum(s.errors){seconds_sum}, {histograms} "
        f"FROM {source} s WHERE {where} GROUP BY {positions} ORDER BY {block_first}",
        params,
    )
    groups = cur.fetchall()
    if not groups:
        return 0
    # Summed per block in SQL: parsing every source row's jsonb in Python cost more (hour_blocks measured it).
    cur.execute(
        f"SELECT {source_keys}, {block}, o.key, sum(o.value::int8) "
        f"FROM {source} s CROSS JOIN LATERAL jsonb_each_text(s.outcomes) o WHERE {where} GROUP BY {positions}, o.key",
        params,
    )
    n = len(keys) + 1
    outcomes: defaultdict[tuple, dict[str, int]] = defaultdict(dict)
    for rec in cur.fetchall():
        if rec[n + 1]:
            outcomes[tuple(rec[:n])][rec[n]] = int(rec[n + 1])
    first = n + (3 if seconds else 2)
    each = [[i] for i in range(len(groups))]
    packed = [merged([g[first + k] for g in groups], each, len(groups)) for k in range(len(HIST_COLUMNS))]
    extra = ["sample_seconds"] if seconds else []
    columns = [*keys, "span_hours", "start", "samples", "errors", *extra, "updated_at", *JSON_COLUMNS]
    with cur.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for i, g in enumerate(groups):
            key = tuple(g[:n])
            copy.write_row(
                [
                    *g[: n - 1],
                    span_hours,
                    g[n - 1],
                    g[n],
                    g[n + 1],
                    *([g[n + 2]] if seconds else []),
                    now,
                    json.dumps(dict(sorted(outcomes.get(key, {}).items()))),
                    *(column[i] for column in packed),
                ]
            )
    return len(groups)


def merged(datas: list[bytes | None], into: list[list[int]], n: int) -> list[bytes]:
    """The stored histogram (probes.packed) of each of n output rows: the entries of datas[g] (a group's stored
    histograms one after another) counted into every row of into[g]."""
    if any(len(data or b"") % ENTRY.itemsize for data in datas):
        raise ValueError("a rollup holds a histogram that is not whole entries (probes.packed)")
    index, count = unpack(b"".join(data or b"" for data in datas))
    if len(index) and index.max() >= BUCKETS:
        raise ValueError("a rollup holds a bucket index outside the histogram layout")
    group = np.repeat(np.arange(len(datas)), [len(data or b"") // ENTRY.itemsize for data in datas])
    rows = np.array([r for targets in into for r in targets], dtype=np.int64)
    fan = np.array([len(targets) for targets in into], dtype=np.int64)
    # Each entry once per row its group counts in: first, for every group, where its rows start in `rows`.
    starts = np.concatenate([[0], np.cumsum(fan)[:-1]])
    copies = fan[group]
    entry = np.repeat(np.arange(len(group)), copies)
    offset = np.arange(len(entry)) - np.repeat(np.cumsum(copies) - copies, copies)
    target = rows[starts[group[entry]] + offset]
    # Summed per (row, bucket) in sorted order, which is the stored order: by row, then bucket index. Sparse: a
    # dense array of every row's buckets was most of the time. Exact: float64 holds every integer below 2**53.
    keys, inverse = np.unique(target * BUCKETS + index[entry], return_inverse=True)
    summed = np.bincount(inverse, weights=count[entry]).astype(np.int64)
    if summed.max(initial=0) > MAX_COUNT:
        raise ValueError(f"a merged bucket would count more than {MAX_COUNT} samples (probes.packed)")
    row = keys // BUCKETS
    entries = np.empty(len(keys), dtype=ENTRY)
    entries["index"], entries["count"] = keys % BUCKETS, summed
    data = entries.tobytes()
    bounds = np.searchsorted(row, np.arange(n + 1)) * ENTRY.itemsize
    return [data[bounds[i] : bounds[i + 1]] for i in range(n)]
