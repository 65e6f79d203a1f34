"""The trailing-window quantiles are read with PostgreSQL's percentile_disc, which ranks in float8: that is the one
nearest-rank rule only where float8 agrees with the exact rank, and it must for every quantile the gauges expose up
to the most values a window may hold."""

from __future__ import annotations

from probes.readings.latest import TRAILING_QUANTILES, TRAILING_SAMPLES_MAX
from probes.readings.rank import float_rank_agrees


def test_every_exposed_quantile_ranks_exactly_in_float8_up_to_the_window_bound():
    assert all(float_rank_agrees(q, TRAILING_SAMPLES_MAX) for q in TRAILING_QUANTILES)


def test_the_check_finds_a_quantile_that_float8_ranks_one_off():
    # 0.07 * 100 is 7.000000000000001 in float8: percentile_disc would take the 8th value, not the 7th.
    assert not float_rank_agrees(0.07, 100)
