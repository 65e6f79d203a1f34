"""stored_percentiles picks a stored histogram's percentiles from its entries as they are stored (probes.packed),
without building a Histogram: the time series of every target does so for each bucket holding one region block.
It must give what Histogram.percentiles gives, and refuse entries out of order."""

import numpy as np
import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probes.histogram import BUCKETS, Histogram, stored_percentiles
from probes.packed import pack, pack_agg, unpack

counts = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, 10_000), min_size=1, max_size=60)
quantiles = st.lists(st.sampled_from([0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0]), min_size=1, max_size=4)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts, quantiles)
def test_a_stored_histogram_picks_what_the_histogram_picks(buckets: dict[int, int], qs: list[float]) -> None:
    histogram = Histogram(buckets)
    assert stored_percentiles(*unpack(pack(buckets)), *qs) == histogram.percentiles(*qs)


def test_entries_out_of_order_are_refused_rather_than_misread() -> None:
    assert stored_percentiles(np.array([20, 10]), np.array([5, 5]), 0.5) is None
    assert stored_percentiles(np.array([10, 10]), np.array([5, 5]), 0.5) is None


def test_an_empty_stored_histogram_has_no_percentiles() -> None:
    assert stored_percentiles(*unpack(b""), 0.5, 0.95) == [None, None]


@pytest.mark.django_db
def test_postgres_packs_counts_given_in_any_order_in_ascending_bucket_order() -> None:
    buckets = {995: 1, 9: 2, 10: 3, 99: 4, 100: 5, 0: 6, 5: 7, 256: 8}
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {pack_agg('k', 'n')} FROM unnest(%s::int[], %s::int8[]) AS t(k, n)",
            [list(buckets), list(buckets.values())],
        )
        (data,) = cur.fetchone()
    indexes, _ = unpack(data)
    assert indexes.tolist() == sorted(buckets)
    assert stored_percentiles(*unpack(data), 0.1, 0.5, 1.0) == Histogram(buckets).percentiles(0.1, 0.5, 1.0)
