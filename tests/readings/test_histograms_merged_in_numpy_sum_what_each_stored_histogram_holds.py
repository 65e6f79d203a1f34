"""merge_histograms sums a group's stored histograms (histograms_sql's text: the rows' jsonb joined into one JSON
array) per bucket index with numpy. Whatever the rows hold (empty histograms among them, the largest bucket index,
counts past 2**31), the counts are those of adding every stored histogram up one entry at a time, as PostgreSQL
returns the text."""

import json
from collections import Counter

import pytest
from django.db import connection
from hypothesis import given
from hypothesis import strategies as st

from probes.histogram import BUCKETS, Histogram
from probes.readings.rollup import histograms_sql, merge_histograms

histogram = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, 2**40), max_size=40)


def stored_text(histograms: list[dict[int, int]]) -> str:
    # As jsonb's text output writes them: keys quoted, ": " and ", " between.
    return "[" + ",".join(json.dumps({str(k): n for k, n in sorted(h.items())}) for h in histograms) + "]"


def summed(histograms: list[dict[int, int]]) -> dict[int, int]:
    total: Counter[int] = Counter()
    for h in histograms:
        total.update(h)
    return dict(total)


@given(st.lists(histogram, min_size=1, max_size=12))
def test_merged_counts_are_the_sum_of_every_stored_histogram(histograms: list[dict[int, int]]) -> None:
    assert merge_histograms(stored_text(histograms)) == summed(histograms)


def test_a_group_of_empty_histograms_has_no_counts() -> None:
    assert merge_histograms("[{},{},{}]") == {}
    assert merge_histograms(None) == {}


def test_a_negative_bucket_index_is_kept_for_the_histogram_to_refuse() -> None:
    # No rollup stores one; numpy's bincount cannot count it, so the Python merge takes the text as it is.
    merged = merge_histograms('[{"-3": 2, "5": 1}, {"5": 4}]')
    assert merged == {-3: 2, 5: 5}
    with pytest.raises(ValueError, match="bucket index"):
        Histogram(merged)


def test_runs_of_empty_histograms_between_full_ones_lose_no_count() -> None:
    histograms = [{}, {3: 2}, {}, {}, {}, {3: 1, 700: 5}, {}]
    assert merge_histograms(stored_text(histograms)) == {3: 3, 700: 5}


@pytest.mark.django_db
def test_the_text_postgres_aggregates_merges_to_the_rows_sum() -> None:
    histograms = [{12: 3, 15: 1}, {}, {3: 2, 12: 4}, {BUCKETS - 1: 2**33}]
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {histograms_sql('h')} FROM unnest(%s::jsonb[]) AS h",
            [[json.dumps({str(k): n for k, n in h.items()}) for h in histograms]],
        )
        (text,) = cur.fetchone()
    assert merge_histograms(text) == summed(histograms)
