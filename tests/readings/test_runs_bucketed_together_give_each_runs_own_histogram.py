"""histograms_of_runs buckets the raw values of many groups together (probes.readings.raw: every group's run of a
column at once); each run's histogram must be the one its values alone give, whatever runs lie beside it: empty
runs first, between and last, one value, values on bucket edges, runs whose buckets the runs beside them share."""

import math
import random

import numpy as np
import pytest

from probes.histogram import _EDGES, MAX_VALUE, MIN_VALUE, Histogram, histogram_of, histograms_of_runs


def runs_together(runs: list[list[float]]) -> list[Histogram]:
    values = np.array([v for run in runs for v in run], dtype=np.float64)
    return histograms_of_runs(values, [len(run) for run in runs])


def test_each_run_gets_the_histogram_of_its_own_values() -> None:
    rng = random.Random(29)
    edges = [e for edge in _EDGES[::37] for e in (math.nextafter(edge, 0.0), edge, math.nextafter(edge, math.inf))]
    runs: list[list[float]] = [[], [], [412.0], []]
    for _ in range(300):
        size = rng.choice([0, 1, 2, 3, 8, 40])
        runs.append([rng.choice([*edges, rng.lognormvariate(math.log(400), 1.0)]) for _ in range(size)])
    # Neighbours holding the very same values, so one bucket's counts could leak from one run into the next.
    runs += [[250.0, 250.0], [250.0], [0.0, MIN_VALUE / 2, MAX_VALUE * 10, math.inf], [], []]

    together = runs_together(runs)
    # Each run ascending, counted without a sort (what a raw read keeping its values passes).
    ascending = [sorted(run) for run in runs]
    counted = histograms_of_runs(
        np.array([v for run in ascending for v in run], dtype=np.float64),
        [len(run) for run in ascending],
        ascending=True,
    )

    assert len(together) == len(counted) == len(runs)
    for run, histogram, from_sorted in zip(runs, together, counted, strict=True):
        assert histogram == from_sorted == histogram_of(run)
        assert histogram.count == from_sorted.count == len(run)


def test_no_values_at_all_give_an_empty_histogram_per_run() -> None:
    assert [h.count for h in runs_together([[], [], []])] == [0, 0, 0]
    assert histograms_of_runs(np.array([], dtype=np.float64), []) == []


def test_lengths_that_do_not_add_up_to_the_values_are_refused() -> None:
    with pytest.raises(ValueError, match="runs of 3 values in all, given 2"):
        histograms_of_runs(np.array([1.0, 2.0]), [1, 2])


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_a_value_bucket_index_refuses_is_refused_in_any_run(bad: float) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        runs_together([[10.0], [], [20.0, bad]])
