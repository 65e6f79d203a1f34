"""Percentiles of many groups' merged histograms at once: the time series' buckets, each merged from its rollup
rows' stored histograms (histograms_sql's bytes) and its raw rows' bucket counts, then picked.

The same nearest rank as Histogram.percentiles, in a few numpy operations over all the groups instead of a
merge and a walk per group: a 30-day series of one target merges some 900 buckets of twelve hourly histograms,
and per group the Python steps, not the counting, were what it cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from probes.histogram import BUCKET_VALUES, BUCKETS, Histogram, _rank
from probes.packed import ENTRY_BYTES, unpack

# Groups summed at a time: a dense count array of CHUNK x BUCKETS float64 (a couple of megabytes) stays in the cache.
CHUNK = 256


def parsed_entries(datas: Sequence[bytes | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(group, bucket index, count) of every entry of the stored histograms, or None when one is not whole
    entries or an index lies outside the layout (then every group is merged on its own, whose reading refuses
    it with the error)."""
    present = [i for i, data in enumerate(datas) if data]
    if any(len(datas[i]) % ENTRY_BYTES for i in present):  # type: ignore[arg-type]
        return None
    if not present:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    entries = np.array([len(datas[i]) // ENTRY_BYTES for i in present], dtype=np.int64)  # type: ignore[arg-type]
    index, count = unpack(b"".join([datas[i] for i in present]))  # type: ignore[misc]
    # Whole entries each (checked above), so the joined bytes hold exactly the entries counted.
    if len(index) and index.max() >= BUCKETS:
        return None
    return np.repeat(np.array(present, dtype=np.int64), entries), index, count


def _one(data: bytes | None, extra: Mapping[int, int] | None, qs: tuple[float, ...]) -> list[float | None]:
    from probes.readings.rollup import merge_histograms

    counts = merge_histograms(data)
    get = counts.get
    for k, n in (extra or {}).items():
        counts[k] = get(k, 0) + n
    return Histogram.of_sums(counts).percentiles(*qs)


def merged_percentiles(
    datas: Sequence[bytes | None], extra: Sequence[Mapping[int, int] | None], qs: tuple[float, ...]
) -> list[list[float | None]]:
    """For each group i: the qs (nearest rank, None without samples) of the histograms of datas[i] (a
    histograms_sql value; None: no rows) merged with the bucket counts extra[i] (None: none)."""
    groups = len(datas)
    assert len(extra) == groups
    parsed = parsed_entries(datas)
    if parsed is None:
        return [_one(data, more, qs) for data, more in zip(datas, extra, strict=True)]
    group, index, count = parsed
    more = [(i, k, n) for i, counts in enumerate(extra) if counts for k, n in counts.items()]
    if more:
        added = np.array(more, dtype=np.int64)
        if added[:, 1].min() < 0 or added[:, 1].max() >= BUCKETS:
            return [_one(data, more_, qs) for data, more_ in zip(datas, extra, strict=True)]
        group = np.concatenate([group, added[:, 0]])
        index = np.concatenate([index, added[:, 1]])
        count = np.concatenate([count, added[:, 2]])
        order = np.argsort(group, kind="stable")
        group, index, count = group[order], index[order], count[order]
    out: list[list[float | None]] = []
    for first in range(0, groups, CHUNK):
        size = min(CHUNK, groups - first)
        a, b = np.searchsorted(group, [first, first + size])
        # Exact: float64 holds every integer count below 2**53.
        dense = np.bincount(
            (group[a:b] - first) * BUCKETS + index[a:b], weights=count[a:b], minlength=size * BUCKETS
        ).reshape(size, BUCKETS)
        running = np.cumsum(dense, axis=1)
        totals = running[:, -1].astype(np.int64).tolist()
        picks = []
        for q in qs:
            ranks = np.array([_rank(q, n) for n in totals], dtype=np.float64)
            # The first bucket whose running count reaches the rank, as Histogram.percentiles walks them.
            picks.append(BUCKET_VALUES[(running >= ranks[:, None]).argmax(axis=1)].tolist())
        out += [[p[g] if totals[g] else None for p in picks] for g in range(size)]
    return out
