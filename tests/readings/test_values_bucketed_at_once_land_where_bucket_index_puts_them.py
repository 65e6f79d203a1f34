"""histograms_of_runs buckets a raw window's values at once, in numpy (searchsorted over SQL_EDGES); it must
put every value where bucket_index does, edges and their neighbours included, and refuse what add() refuses."""

import math
import random

import numpy as np
import pytest

from probes.histogram import _EDGES, MAX_VALUE, MIN_VALUE, Histogram, histogram_of, histograms_of_runs


def histogram_of_values(values: list[float]) -> Histogram:
    """All the values as one run."""
    return histograms_of_runs(np.asarray(values, dtype=np.float64), [len(values)])[0]


def test_every_edge_and_its_neighbours_land_where_bucket_index_puts_them() -> None:
    values = [0.0, MIN_VALUE / 2, MAX_VALUE, MAX_VALUE * 10, math.inf]
    for edge in _EDGES:
        values += [math.nextafter(edge, 0.0), edge, math.nextafter(edge, math.inf)]
    assert histogram_of_values(values) == histogram_of(values)


def test_values_of_a_real_spread_with_repeats_give_the_same_histogram() -> None:
    rng = random.Random(17)
    values = [rng.lognormvariate(math.log(400), 0.8) for _ in range(5_000)]
    values += values[:500] + [int(v) for v in values[:200]]
    assert histogram_of_values(values) == histogram_of(values)
    assert histogram_of_values(values).count == len(values)


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_a_value_bucket_index_refuses_is_refused_here_too(bad: float) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        histogram_of_values([10.0, bad, 20.0])
