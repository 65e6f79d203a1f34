"""Percentiles of many groups' merged histograms at once: the time series' buckets, each merged from its rollup
rows' stored histograms (histograms_sql's text) and its raw rows' bucket counts, then picked.

The same nearest rank as Histogram.percentiles, in a few numpy operations over all the groups instead of a
merge and a walk per group: a 30-day series of one target merges some 900 buckets of twelve hourly histograms,
and per group the Python steps, not the counting, were what it cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from probes.histogram import BUCKETS, Histogram, _rank, bucket_value

# Groups summed at a time: a dense count array of CHUNK x BUCKETS float64 (about 2 MB) stays in the cache.
CHUNK = 256
_VALUES = np.array([bucket_value(i) for i in range(BUCKETS)])
# The characters of stored histogram text ({"12": 3, "15": 1},{"3": 2}) around its numbers, each made a space:
# numpy then reads the numbers as one run (fromstring skips any run of whitespace).
_SPACES = bytes.maketrans(b'{}[]":,', b"       ")


def _parsed(texts: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(group, bucket index, count) of every entry of the texts, or None when the text is not all it should be
    (then every group is merged on its own, as merge_histograms does)."""
    present = [i for i, text in enumerate(texts) if text]
    if not present:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    # An entry is one colon: keys and counts are digits.
    entries = np.array([texts[i].count(":") for i in present], dtype=np.int64)  # type: ignore[union-attr]
    data = " ".join([texts[i] for i in present]).encode().translate(_SPACES)  # type: ignore[misc]
    try:
        values = np.fromstring(data, dtype=np.int64, sep=" ")
    except ValueError:
        return None
    if len(values) != 2 * int(entries.sum()):
        return None
    index, count = values[0::2], values[1::2]
    if len(index) and (index.min() < 0 or index.max() >= BUCKETS or count.min() < 0):
        return None
    return np.repeat(np.array(present, dtype=np.int64), entries), index, count


def _one(text: str | None, extra: Mapping[int, int] | None, qs: tuple[float, ...]) -> list[float | None]:
    from probes.readings.rollup import merge_histograms

    counts = merge_histograms(text)
    get = counts.get
    for k, n in (extra or {}).items():
        counts[k] = get(k, 0) + n
    return Histogram.of_sums(counts).percentiles(*qs)


def merged_percentiles(
    texts: Sequence[str | None], extra: Sequence[Mapping[int, int] | None], qs: tuple[float, ...]
) -> list[list[float | None]]:
    """For each group i: the qs (nearest rank, None without samples) of the histograms of texts[i] (a
    histograms_sql value; None: no rows) merged with the bucket counts extra[i] (None: none)."""
    groups = len(texts)
    assert len(extra) == groups
    parsed = _parsed(texts)
    if parsed is None:
        return [_one(text, more, qs) for text, more in zip(texts, extra, strict=True)]
    group, index, count = parsed
    more = [(i, k, n) for i, counts in enumerate(extra) if counts for k, n in counts.items()]
    if more:
        added = np.array(more, dtype=np.int64)
        if added[:, 1].min() < 0 or added[:, 1].max() >= BUCKETS:
            return [_one(text, more_, qs) for text, more_ in zip(texts, extra, strict=True)]
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
            picks.append(_VALUES[(running >= ranks[:, None]).argmax(axis=1)].tolist())
        out += [[p[g] if totals[g] else None for p in picks] for g in range(size)]
    return out
