"""A histogram held dense (BUCKETS counts, as a long read's merged rollups are)
gives what the same counts held sparse give: count, percentiles, merges with
either kind in either order, subtraction, equality, export and adding values.
A dense array it was made from, or merged from, is never changed (a cached
merge shares it). dense_counts merges each group's stored histograms as
merge_histograms does, all groups in one array."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probes.histogram import BUCKETS, Histogram
from probes.packed import MAX_COUNT, pack
from probes.readings.rollup import dense_counts, merge_histograms

counts = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, 10**6), max_size=40)
QS = (0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 1.0)


def dense(c: dict[int, int]) -> Histogram:
    array = np.zeros(BUCKETS, dtype=np.int64)
    for index, n in c.items():
        array[index] = n
    return Histogram.of_dense(array)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts)
def test_a_dense_histogram_counts_and_picks_as_the_sparse_one(c):
    assert dense(c).count == Histogram(c).count
    assert dense(c).percentiles(*QS) == Histogram(c).percentiles(*QS)
    assert dense(c) == Histogram(c)
    assert dense(c).to_sparse() == Histogram(c).to_sparse()
    assert dense(c).fraction_below(250.0) == Histogram(c).fraction_below(250.0)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts, counts, st.sampled_from(["dense+dense", "dense+sparse", "sparse+dense", "empty+dense"]))
def test_merges_of_either_kind_give_the_sparse_merge(a, b, kinds):
    expected = Histogram(a)
    expected.merge(Histogram(b))
    left_kind, right_kind = kinds.split("+")
    left = Histogram() if left_kind == "empty" else dense(a) if left_kind == "dense" else Histogram(a)
    right = dense(b) if right_kind == "dense" else Histogram(b)
    shared = right._array().copy() if right_kind == "dense" else None
    left.merge(right)
    if left_kind == "empty":
        expected = Histogram(b)
    assert left == expected and left.count == expected.count
    assert left.percentiles(*QS) == expected.percentiles(*QS)
    if shared is not None:
        assert (right._array() == shared).all()  # the merged-from array is unchanged


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts, counts)
def test_subtracting_a_part_leaves_the_rest_of_either_kind(rest, part):
    whole = dense(rest)
    whole.merge(Histogram(part))
    whole.subtract(dense(part))
    assert whole == Histogram(rest) and whole.count == Histogram(rest).count
    assert whole.percentiles(*QS) == Histogram(rest).percentiles(*QS)


def test_subtracting_what_a_dense_histogram_does_not_hold_changes_nothing():
    whole = dense({3: 2, 5: 1})
    with pytest.raises(ValueError, match="does not hold"):
        whole.subtract(Histogram({5: 2}))
    assert whole == Histogram({3: 2, 5: 1}) and whole.count == 3


def test_adding_a_value_to_a_dense_histogram_leaves_its_array_alone():
    array = np.zeros(BUCKETS, dtype=np.int64)
    array[700] = 4
    hist = Histogram.of_dense(array)
    hist.add(120.0)
    assert hist.count == 5 and array.sum() == 4
    with pytest.raises(ValueError, match="long"):
        Histogram.of_dense(np.zeros(3, dtype=np.int64))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, MAX_COUNT), max_size=20))))
def test_dense_counts_merge_each_group_as_merge_histograms_does(groups):
    datas = [b"".join(pack(h) for h in hists) or None for hists in groups]
    rows = dense_counts(datas)
    assert rows is not None and rows.shape == (len(groups), BUCKETS)
    for row, data in zip(rows, datas, strict=True):
        nonzero = np.flatnonzero(row)
        assert dict(zip(nonzero.tolist(), row[nonzero].tolist(), strict=True)) == merge_histograms(data)


def test_bytes_that_are_not_whole_entries_are_left_to_merge_histograms_to_refuse():
    assert dense_counts([pack({1: 2}), b"\x00\x01\x02"]) is None
