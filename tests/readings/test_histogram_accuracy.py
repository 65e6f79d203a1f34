"""Histograms answer percentiles within 2% of the raw samples, and merge without losing that accuracy."""

import json
import math
import random

import pytest

from probes.histogram import (
    BUCKETS,
    MAX_VALUE,
    MIN_VALUE,
    Histogram,
    bucket_bounds,
    bucket_index,
    bucket_value,
    exact_percentile,
    histogram_of,
)

N = 10_000
QUANTILES = (0.5, 0.9, 0.95, 0.99)


def lognormal_around_300_ms(rng):
    return [rng.lognormvariate(math.log(300), 0.6) for _ in range(N)]


def bimodal_50_ms_and_3_s(rng):
    # Fast cached answers next to slow cold ones: the shape where averaged percentiles go most wrong.
    return [rng.lognormvariate(math.log(50 if rng.random() < 0.5 else 3000), 0.15) for _ in range(N)]


def uniform_0_1_to_10_ms(rng):
    return [rng.uniform(0.1, 10) for _ in range(N)]


def mostly_zeros(rng):
    # Over half zeros puts the median itself in the underflow bucket.
    return [0.0 if rng.random() < 0.6 else rng.lognormvariate(math.log(20), 1.0) for _ in range(N)]


DISTRIBUTIONS = [lognormal_around_300_ms, bimodal_50_ms_and_3_s, uniform_0_1_to_10_ms, mostly_zeros]


@pytest.fixture(params=DISTRIBUTIONS, ids=lambda f: f.__name__)
def samples(request):
    return request.param(random.Random(20240607))


def test_every_percentile_is_within_2_percent_of_the_exact_one(samples):
    histogram = histogram_of(samples)
    assert histogram.count == N
    for q in QUANTILES:
        exact = exact_percentile(samples, q)
        # Relative bound, so an exact 0 must be answered with exactly 0.
        assert abs(histogram.percentile(q) - exact) <= 0.02 * exact, q


def test_any_value_is_within_1_percent_of_its_bucket_value():
    rng = random.Random(7)
    values = [MIN_VALUE * (MAX_VALUE / MIN_VALUE) ** rng.random() for _ in range(20_000)]
    values += [bucket_bounds(i)[0] for i in range(1, BUCKETS)]
    for value in values:
        index = bucket_index(value)
        lower, upper = bucket_bounds(index)
        assert lower <= value < upper or index == BUCKETS - 1
        assert abs(bucket_value(index) - value) <= 0.01 * value


def test_values_outside_the_range_fall_into_the_end_buckets():
    assert bucket_index(0) == 0 and bucket_value(0) == 0.0
    assert bucket_index(MIN_VALUE / 2) == 0
    assert bucket_index(MIN_VALUE) == 1
    assert bucket_index(MAX_VALUE) == BUCKETS - 1
    assert bucket_index(MAX_VALUE * 10) == BUCKETS - 1


def test_merging_parts_equals_the_histogram_of_the_whole(samples):
    whole = histogram_of(samples)
    cuts = [0, 17, 2500, 2501, 7000, N]
    parts = [histogram_of(samples[a:b]) for a, b in zip(cuts, cuts[1:])]

    merged = Histogram.merged(parts)
    assert merged == whole
    assert merged.count == N
    for q in QUANTILES:
        assert merged.percentile(q) == whole.percentile(q)

    in_place = Histogram()
    for part in parts:
        in_place.merge(part)
    assert in_place == whole


def test_merged_leaves_its_inputs_untouched():
    a, b = histogram_of([1.0, 2.0]), histogram_of([3.0])
    Histogram.merged([a, b])
    assert a == histogram_of([1.0, 2.0]) and b == histogram_of([3.0])


def test_merging_a_larger_histogram_in_sums_both_and_leaves_it_untouched(samples):
    # merge adds the smaller into a copy of the larger; the larger may be a cached merge others still read.
    small, large = histogram_of(samples[:3]), histogram_of(samples[3:])
    before = Histogram.merged([large])
    small.merge(large)
    assert small == histogram_of(samples) and small.count == N
    assert large == before and large.count == N - 3
    small.merge(histogram_of([1.0]))
    assert large == before and small.count == N + 1


def test_sparse_form_round_trips_through_json(samples):
    histogram = histogram_of(samples)
    sparse = json.loads(json.dumps(histogram.to_sparse()))
    assert all(isinstance(k, str) and v > 0 for k, v in sparse.items())
    assert Histogram.from_sparse(sparse) == histogram


def test_zero_counts_are_not_stored():
    assert Histogram({5: 0, 6: 2}).to_sparse() == {"6": 2}
    assert Histogram({5: 0}) == Histogram()


def test_percentile_uses_nearest_rank():
    histogram = histogram_of([10.0] * 9 + [1000.0])
    assert histogram.percentile(0.9) == pytest.approx(10.0, rel=0.01)
    assert histogram.percentile(0.91) == pytest.approx(1000.0, rel=0.01)
    assert histogram.percentile(0.0) == bucket_value(bucket_index(10.0))
    assert histogram.percentile(1.0) == bucket_value(bucket_index(1000.0))


def test_an_empty_histogram_has_no_percentile():
    assert Histogram().percentile(0.5) is None
    assert Histogram().fraction_below(100) is None


def test_fraction_below_counts_only_buckets_wholly_under_the_threshold():
    histogram = histogram_of([10.0] * 3 + [1000.0])
    assert histogram.fraction_below(100) == 0.75
    assert histogram.fraction_below(1) == 0.0
    assert histogram.fraction_below(MAX_VALUE * 2) == 1.0
    # The bucket holding 10 ms straddles 10 ms itself, so those samples are not certainly below it.
    assert histogram.fraction_below(10.0) == 0.0


@pytest.mark.parametrize("bad", [-0.001, -5, float("nan")])
def test_negative_or_nan_values_raise(bad):
    with pytest.raises(ValueError):
        bucket_index(bad)
    with pytest.raises(ValueError):
        Histogram().add(bad)
    with pytest.raises(ValueError):
        histogram_of([1.0, bad])


@pytest.mark.parametrize("q", [-0.1, 1.5, float("nan")])
def test_quantiles_outside_0_to_1_raise(q):
    with pytest.raises(ValueError):
        histogram_of([1.0]).percentile(q)
    with pytest.raises(ValueError):
        exact_percentile([1.0], q)


@pytest.mark.parametrize("sparse", [{"x": 1}, {str(BUCKETS): 1}, {"-1": 1}, {"3": -2}])
def test_corrupt_sparse_rows_raise(sparse):
    with pytest.raises(ValueError):
        Histogram.from_sparse(sparse)


def test_several_percentiles_at_once_are_each_percentile_alone(samples):
    hist = histogram_of(samples)
    qs = (0.95, 0.5, 0.0, 1.0, 0.99, 0.5, 0.07)  # unordered, repeated, both ends
    assert hist.percentiles(*qs) == [hist.percentile(q) for q in qs]
    assert len(set(hist.percentiles(*qs))) > 2
    assert Histogram().percentiles(0.5, 0.95) == [None, None]
