"""Mergeable histograms of non-negative values over fixed, log-spaced buckets.

Hourly rollups store one of these per series and metric instead of precomputed percentiles, because
percentiles cannot be averaged: the p95 of a day is not the mean of 24 hourly p95s. Counts per bucket can simply
be added, so any range (an hour, a week, all regions together) is read from the sum of its parts, with the same
error bound.

The layout knows no unit: the relative error is the same whatever a value means. It holds milliseconds for the
latency metrics and tokens per second for throughput (probes.metrics says which metric has which unit); both
live well inside MIN_VALUE .. MAX_VALUE (a few ms to minutes; a few to a few thousand tok/s).

Every histogram in the system shares one bucket layout, fixed here, so that stored rows from any date can be
merged with each other. Changing MIN_VALUE, MAX_VALUE or RATIO invalidates every stored rollup.

Bucket 0 holds [0, MIN_VALUE) and stands for 0: a latency under 10 microseconds is measurement noise, and so is
a rate of one token per 100 s. Buckets 1..BUCKETS-1 hold [MIN_VALUE * RATIO**(i-1), MIN_VALUE * RATIO**i).
Anything above MAX_VALUE is recorded in the last bucket, i.e. read back as "about an hour" of milliseconds;
nothing legitimate is that large (ingest stores implausible rates as NULL before they get here), so saturating
is preferable to rejecting the sample and losing it from the count.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate, pairwise

import numpy as np

# In the metric's unit: 0.01 ms .. one hour for latencies, 0.01 .. 3.6 million tok/s for rates.
MIN_VALUE = 0.01
MAX_VALUE = 3_600_000.0
# A bucket's geometric midpoint is within sqrt(RATIO) - 1 (about 0.995%) of anything in it, leaving headroom
# under the 2% accuracy promise for floating-point slop; it costs only ~1000 buckets to span 0.01 ms to 1 h.
RATIO = 1.02

_LOG_RATIO = math.log(RATIO)
_LOG_BUCKETS = math.ceil(math.log(MAX_VALUE / MIN_VALUE) / _LOG_RATIO)
BUCKETS = _LOG_BUCKETS + 1
_LAST = BUCKETS - 1
# A table rather than recomputing pow() on demand, so bucket_index and bucket_bounds agree exactly about which
# side of an edge a value falls on; math.log alone can land one bucket off right at a boundary.
_EDGES = [MIN_VALUE * RATIO**k for k in range(_LOG_BUCKETS + 1)]
# What SQL compares a value with to bucket it: width_bucket(value, SQL_EDGES) is the number of these edges <= value,
# which is bucket_index exactly (bucket 0 below MIN_VALUE, the last bucket absorbing everything from its lower edge
# up), compared in float8 against the very doubles Python uses (bound as a float8[] parameter or literal, never
# printed); tests/rollups_sql checks it on every edge. Rollups, regions.csv and raw readings all bucket with it.
SQL_EDGES = _EDGES[:-1]


def _check_value(value: float) -> float:
    number = float(value)
    # `not number >= 0` is also true for NaN, which would otherwise slip through every comparison below.
    if not number >= 0:
        raise ValueError(f"a histogram value must be a non-negative number, got {value!r}")
    return number


def bucket_index(value: float) -> int:
    value = _check_value(value)
    if value < MIN_VALUE:
        return 0
    if value >= _EDGES[-2]:
        # Also catches +inf, which math.log would turn into an unconvertible float.
        return _LAST
    index = int(math.log(value / MIN_VALUE) / _LOG_RATIO) + 1
    if value < _EDGES[index - 1]:
        index -= 1
    elif value >= _EDGES[index]:
        index += 1
    return index


def _check_index(index: int) -> int:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < BUCKETS:
        raise ValueError(f"bucket index must be an int in [0, {BUCKETS}), got {index!r}")
    return index


def bucket_bounds(index: int) -> tuple[float, float]:
    """[lower, upper) of a bucket; the last bucket also absorbs everything above its upper bound."""
    index = _check_index(index)
    if index == 0:
        return 0.0, MIN_VALUE
    return _EDGES[index - 1], _EDGES[index]


def bucket_value(index: int) -> float:
    index = _check_index(index)
    if index == 0:
        return 0.0
    lower, upper = _EDGES[index - 1], _EDGES[index]
    # Geometric, not arithmetic, midpoint: it minimises the worst *relative* error, which is what the
    # accuracy goal is stated in.
    return math.sqrt(lower * upper)


def _rank(q: float, n: int) -> int:
    """1-based nearest-rank position of the q-quantile among n samples."""
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be within [0, 1], got {q!r}")
    # Rounding first keeps float noise from bumping the rank: 0.07 * 100 is 7.000000000000001, whose ceil is 8.
    return max(1, math.ceil(round(q * n, 9)))


def _check_count(count: int) -> int:
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueError(f"count must be a non-negative int, got {count!r}")
    return count


def _walk(indexes: Sequence[int], counts: Sequence[int], qs: tuple[float, ...]) -> list[float | None]:
    """The nearest-rank percentile of each q over buckets in ascending index order (indexes, and their counts):
    the first bucket whose running count reaches the rank. The running counts and the searches run in C."""
    running = list(accumulate(counts))
    n = running[-1] if running else 0
    out: list[float | None] = []
    for q in qs:
        rank = _rank(q, n)
        if not n:
            out.append(None)
            continue
        at = bisect_left(running, rank)
        if at == len(running):
            raise AssertionError("bucket counts do not add up to the histogram's count")
        out.append(bucket_value(indexes[at]))
    return out


def stored_percentiles(indexes: np.ndarray, counts: np.ndarray, *qs: float) -> list[float | None] | None:
    """Histogram.percentiles of stored histograms given as their entries (probes.packed.unpack), without
    building one; None unless the indexes strictly ascend, as one stored histogram's do. (The time series of
    every target reads one stored region block per bucket and region: most of what it picks.)"""
    if len(indexes) > 1 and not (np.diff(indexes) > 0).all():
        return None
    return _walk(indexes.tolist(), counts.tolist(), qs)


# Each bucket's value (bucket_value), for picking from dense counts.
BUCKET_VALUES = np.array([bucket_value(i) for i in range(BUCKETS)])


class Histogram:
    """Counts per bucket, held either sparse (a dict of the non-zero buckets: what values and raw rows make) or
    dense (an int64 array of BUCKETS counts: what a long read's merged rollups make, probes.readings.rollup).
    A reading of every target over 30 days merges, subtracts and picks from 900 histograms of about a hundred
    buckets each: as dicts, building them from numpy's sums and walking them cost most of the read's Python time;
    as arrays each step is one numpy call. A dense array may be shared (a cached merge's): it is never changed
    in place, every step makes a new one."""

    __slots__ = ("_counts", "_dense", "_n")

    def __init__(self, counts: Mapping[int, int] | None = None) -> None:
        self._counts: dict[int, int] = {}
        self._dense: np.ndarray | None = None
        self._n = 0
        if counts:
            own = self._counts
            for index, count in counts.items():
                if _check_count(count):
                    own[_check_index(index)] = own.get(index, 0) + count
            self._n = sum(own.values())

    @classmethod
    def of_sums(cls, counts: dict[int, int]) -> Histogram:
        """A histogram taking `counts` as they are (the dict itself, not a
        copy): for bucket counts that PostgreSQL summed from stored rollups
        (probes.readings.rollup), int keys and positive counts by
        construction. Checking each again cost a long read a fifth of its
        Python time (100,000 buckets for the table of every target over 30
        days)."""
        histogram = cls()
        histogram._counts = counts
        histogram._n = sum(counts.values())
        return histogram

    @classmethod
    def of_dense(cls, counts: np.ndarray, total: int | None = None) -> Histogram:
        """A histogram of BUCKETS non-negative int64 counts, taken as they are (not copied, never changed);
        total: their sum, when the caller summed many rows at once."""
        if counts.shape != (BUCKETS,):
            raise ValueError(f"dense counts must be {BUCKETS} long, got shape {counts.shape}")
        histogram = cls()
        histogram._dense = counts
        histogram._n = int(counts.sum()) if total is None else total
        return histogram

    def _sparse(self) -> dict[int, int]:
        """The counts as a dict, a dense histogram made sparse for good (the rarer paths: add, fraction_below,
        to_sparse, equality)."""
        if self._dense is not None:
            nonzero = np.flatnonzero(self._dense)
            self._counts = dict(zip(nonzero.tolist(), self._dense[nonzero].tolist(), strict=True))
            self._dense = None
        return self._counts

    def _array(self) -> np.ndarray:
        """The counts as a dense array: its own when dense, else a new one (to be replaced, never changed)."""
        if self._dense is not None:
            return self._dense
        dense = np.zeros(BUCKETS, dtype=np.int64)
        if self._counts:
            dense[list(self._counts)] = list(self._counts.values())
        return dense

    def _bump(self, index: int, count: int) -> None:
        if count:
            own = self._sparse()
            own[index] = own.get(index, 0) + count
            self._n += count

    def add(self, value: float, count: int = 1) -> None:
        self._bump(bucket_index(value), _check_count(count))

    def merge(self, other: Histogram) -> None:
        # The hot loop of every long read (a reading per series, merged from
        # its rollups' parts): no call per bucket, and a plain copy into an
        # empty histogram. other's counts are checked and never 0.
        if not self._n:
            if other._dense is not None:
                self._dense, self._counts = other._dense, {}
            else:
                self._counts, self._dense = dict(other._counts), None
            self._n = other._n
            return
        if not other._n:
            return
        if self._dense is not None or other._dense is not None:
            self._dense = self._array() + other._array()
            self._counts = {}
            self._n += other._n
            return
        own, more = self._counts, other._counts
        if len(more) > len(own):
            # The smaller one is added into a copy of the larger (a copy is one C call): a reading's few raw
            # buckets into its days' merge, not the other way round. other's own counts stay as they are: it may
            # be a cached merge.
            own, more = dict(more), own
            self._counts = own
        for index, count in more.items():
            own[index] = own.get(index, 0) + count
        self._n += other._n

    def add_to(self, row: np.ndarray, sign: int = 1) -> None:
        """Add this histogram's counts (sign=-1: take them away) into row, an int64 array of BUCKETS counts that
        the caller owns: a read summing many groups' parts into one array per metric."""
        if self._dense is not None:
            row += sign * self._dense
        elif self._counts:
            counts = np.fromiter(self._counts.values(), dtype=np.int64, count=len(self._counts))
            row[list(self._counts)] += sign * counts

    def subtract(self, other: Histogram) -> None:
        """Take away the counts of a histogram this one holds (a part of its rows): exact, since counts add.
        Raises, changing nothing, if this one does not hold them all."""
        if self._dense is not None or other._dense is not None:
            left = self._array() - other._array()
            if (left < 0).any():
                raise ValueError("cannot subtract counts a histogram does not hold")
            self._dense, self._counts = left, {}
            self._n -= other._n
            return
        own = self._counts
        if any(own.get(index, 0) < count for index, count in other._counts.items()):
            raise ValueError("cannot subtract counts a histogram does not hold")
        own = self._counts = dict(own)  # its dict may be a cached merge's (merge adopts a copy, of_sums its own)
        for index, count in other._counts.items():
            left_count = own[index] - count
            if left_count:
                own[index] = left_count
            else:
                del own[index]
        self._n -= other._n

    @classmethod
    def merged(cls, histograms: Iterable[Histogram]) -> Histogram:
        total = cls()
        for histogram in histograms:
            total.merge(histogram)
        return total

    @property
    def count(self) -> int:
        return self._n

    def percentile(self, q: float) -> float | None:
        return self.percentiles(q)[0]

    def percentiles(self, *qs: float) -> list[float | None]:
        """percentile(q) of each q, sorting the buckets once (a reading's p50, p95 and chosen percentile: the
        sort was most of their cost); a dense histogram's from one running sum and one search."""
        if self._dense is not None:
            if not self._n:
                for q in qs:
                    _rank(q, 0)  # refuses a q outside [0, 1], as _walk does
                return [None] * len(qs)
            running = np.cumsum(self._dense)
            at = np.searchsorted(running, [_rank(q, self._n) for q in qs], side="left").tolist()
            return [float(BUCKET_VALUES[i]) for i in at]
        indexes = sorted(self._counts)
        return _walk(indexes, [self._counts[index] for index in indexes], qs)

    def fraction_below(self, threshold: float) -> float | None:
        """Share of samples certainly under the threshold, for SLO views ("97% answered within 2 s").

        Only whole buckets that end at or below the threshold count, so the share is never overstated: a
        bucket straddling the threshold may hold samples on either side of it.
        """
        threshold = float(threshold)
        if math.isnan(threshold):
            raise ValueError("threshold must be a number, got nan")
        if not self._n:
            return None
        below = sum(count for index, count in self._sparse().items() if bucket_bounds(index)[1] <= threshold)
        return below / self._n

    def to_sparse(self) -> dict[str, int]:
        # String keys because JSON objects only have string keys; sorted so stored rows diff cleanly.
        own = self._sparse()
        return {str(index): own[index] for index in sorted(own)}

    @classmethod
    def from_sparse(cls, d: Mapping[str, int]) -> Histogram:
        counts: dict[int, int] = {}
        for key, count in d.items():
            try:
                index = int(key)
            except (TypeError, ValueError):
                raise ValueError(f"bucket key must be an integer string, got {key!r}") from None
            counts[index] = counts.get(index, 0) + _check_count(count)
        return cls(counts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Histogram):
            return NotImplemented
        return self._sparse() == other._sparse()

    # Mutable, so equal histograms may not stay equal: keep them out of sets and dict keys.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        buckets = len(self._counts) if self._dense is None else int(np.count_nonzero(self._dense))
        return f"Histogram(count={self._n}, buckets={buckets})"


def histogram_of(values: Iterable[float]) -> Histogram:
    histogram = Histogram()
    for value in values:
        histogram.add(value)
    return histogram


# bucket_index over many values at once: SQL_EDGES holds the edges width_bucket counts, and searchsorted (side
# "right") counts the edges <= each value too.
_SQL_EDGES = np.array(SQL_EDGES, dtype=np.float64)


def histograms_of_runs(values: np.ndarray, lengths: Sequence[int], *, ascending: bool = False) -> list[Histogram]:
    """[histogram_of(run) for each run], where the runs are `values` cut after each of `lengths` in turn, with the
    bucketing and counting in numpy: one searchsorted over SQL_EDGES and one unique over (run, bucket) keys for them
    all. A raw window of every target adds tens of thousands of values (probes.readings.raw reads them as arrays),
    too many to bucket with one add() each; and it reads them as hundreds of groups of a handful each, for which
    numpy's fixed cost per call, four calls a group, took longer than the bucketing. A value bucket_index refuses
    (negative, NaN) goes through histogram_of, which raises its error.

    ascending: each run is in ascending order (a raw read keeping its values sorts them anyway), so the keys are
    too and their counts are the lengths of their runs, with no sort."""
    array = np.asarray(values, dtype=np.float64)
    if len(array) != sum(lengths):
        raise ValueError(f"runs of {sum(lengths)} values in all, given {len(array)}")
    if not len(array):
        return [Histogram() for _ in lengths]
    if np.isnan(array).any() or array.min() < 0:
        return [histogram_of(array.tolist())]  # raises
    runs = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    every = runs * BUCKETS + np.searchsorted(_SQL_EDGES, array, side="right")
    if ascending:
        starts = np.flatnonzero(np.concatenate(([True], every[1:] != every[:-1])))
        keys, counts = every[starts], np.diff(np.append(starts, len(every)))
    else:
        keys, counts = np.unique(every, return_counts=True)
    # The keys ascend by run, so each run's buckets are one slice of them.
    cuts = np.searchsorted(keys // BUCKETS, np.arange(len(lengths) + 1)).tolist()
    indexes, counts_list = (keys % BUCKETS).tolist(), counts.tolist()
    return [
        Histogram.of_sums(dict(zip(indexes[a:b], counts_list[a:b], strict=True))) if b > a else Histogram()
        for a, b in pairwise(cuts)
    ]


def exact_percentile(values: Iterable[float], q: float) -> float:
    """Nearest-rank percentile of raw samples: the reference the histogram is tested against, and the
    fallback when raw rows are still at hand. Same rank rule as Histogram.percentile, so the two only ever
    differ by bucket width."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    return ordered[_rank(q, len(ordered)) - 1]
