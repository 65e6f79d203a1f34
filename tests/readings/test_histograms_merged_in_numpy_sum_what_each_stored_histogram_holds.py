"""merge_histograms sums a group's stored histograms (histograms_sql's value: the rows' packed entries one after
another) per bucket index with numpy. Whatever the rows hold (empty histograms among them, the largest bucket
index, the largest count one entry holds, sums past 2**32), the counts are those of adding every stored histogram
up one entry at a time; bytes that are not whole entries are refused."""

from collections import Counter

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probes.histogram import BUCKETS
from probes.packed import MAX_COUNT, pack
from probes.readings.rollup import histograms_sql, merge_histograms

histogram = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, MAX_COUNT), max_size=40)


def stored(histograms: list[dict[int, int]]) -> bytes:
    # As string_agg over the rows returns them.
    return b"".join(pack(h) for h in histograms)


def summed(histograms: list[dict[int, int]]) -> dict[int, int]:
    total: Counter[int] = Counter()
    for h in histograms:
        total.update(h)
    return dict(total)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(histogram, min_size=1, max_size=12))
def test_merged_counts_are_the_sum_of_every_stored_histogram(histograms: list[dict[int, int]]) -> None:
    assert merge_histograms(stored(histograms)) == summed(histograms)


def test_a_group_of_empty_histograms_has_no_counts() -> None:
    assert merge_histograms(stored([{}, {}, {}])) == {}
    assert merge_histograms(None) == {}


def test_bytes_that_are_not_whole_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="whole 6-byte entries"):
        merge_histograms(pack({5: 1}) + b"\x00")


def test_runs_of_empty_histograms_between_full_ones_lose_no_count() -> None:
    histograms = [{}, {3: 2}, {}, {}, {}, {3: 1, 700: 5}, {}]
    assert merge_histograms(stored(histograms)) == {3: 3, 700: 5}


@pytest.mark.django_db
def test_what_postgres_aggregates_merges_to_the_rows_sum() -> None:
    histograms = [{12: 3, 15: 1}, {}, {3: 2, 12: 4}, {BUCKETS - 1: MAX_COUNT}, {BUCKETS - 1: MAX_COUNT}]
    with connection.cursor() as cur:
        cur.execute(f"SELECT {histograms_sql('h')} FROM unnest(%s::bytea[]) AS h", [[pack(h) for h in histograms]])
        (data,) = cur.fetchone()
    assert merge_histograms(data) == summed(histograms)
    assert merge_histograms(data)[BUCKETS - 1] == 2 * MAX_COUNT
