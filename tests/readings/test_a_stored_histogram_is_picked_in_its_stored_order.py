"""stored_percentiles picks a stored histogram's percentiles from its flat [index, count, ...] list as it comes
out of jsonb, without building a Histogram: the time series of every target does so for each bucket holding one
region block. It must give what Histogram.percentiles gives, and refuse a list out of order."""

import json

import pytest
from django.db import connection
from hypothesis import given
from hypothesis import strategies as st

from probes.histogram import BUCKETS, Histogram, stored_percentiles
from probes.readings.rollup import _flat_lists

counts = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, 10_000), min_size=1, max_size=60)
quantiles = st.lists(st.sampled_from([0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0]), min_size=1, max_size=4)


@given(counts, quantiles)
def test_a_stored_histogram_picks_what_the_histogram_picks(buckets: dict[int, int], qs: list[float]) -> None:
    histogram = Histogram(buckets)
    # The text PostgreSQL returns for the stored jsonb: keys in its order, which to_sparse's sorted keys match.
    stored = json.dumps(histogram.to_sparse())
    (flat,) = _flat_lists(f"[{stored}]")
    assert stored_percentiles(flat, *qs) == histogram.percentiles(*qs)


def test_a_list_out_of_order_is_refused_rather_than_misread() -> None:
    assert stored_percentiles([20, 5, 10, 5], 0.5) is None
    assert stored_percentiles([10, 5, 10, 5], 0.5) is None


def test_an_empty_stored_histogram_has_no_percentiles() -> None:
    assert stored_percentiles([], 0.5, 0.95) == [None, None]


@pytest.mark.django_db
def test_postgres_returns_a_histogram_written_in_any_key_order_in_ascending_bucket_order() -> None:
    # jsonb orders keys by length, then bytewise: numeric order for integers without leading zeros ("9" < "10").
    buckets = {995: 1, 9: 2, 10: 3, 99: 4, 100: 5, 0: 6, 5: 7}
    with connection.cursor() as cur:
        cur.execute("SELECT %s::jsonb::text", [json.dumps({str(k): n for k, n in buckets.items()})])
        (text,) = cur.fetchone()
    (flat,) = _flat_lists(f"[{text}]")
    assert flat[::2] == sorted(buckets)
    assert stored_percentiles(flat, 0.1, 0.5, 1.0) == Histogram(buckets).percentiles(0.1, 0.5, 1.0)
