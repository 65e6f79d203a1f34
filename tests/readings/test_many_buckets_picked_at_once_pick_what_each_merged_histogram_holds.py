"""merged_percentiles picks the time series' buckets all at once: each group's stored histograms (histograms_sql's
bytes) merged with its raw counts, then the nearest rank of each percentile. Whatever the groups hold (no rows,
empty histograms, raw counts alone, more groups than one numpy chunk, sums past 2**32), every pick is the one a
Histogram of that group's summed counts makes; a bucket index no histogram has, or bytes that are not whole
entries, are refused, as a group's own merge refuses them."""

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probes.histogram import BUCKETS, Histogram
from probes.packed import MAX_COUNT, pack
from probes.readings import picks
from probes.readings.picks import merged_percentiles
from tests.readings.test_histograms_merged_in_numpy_sum_what_each_stored_histogram_holds import stored

QS = (0.5, 0.95, 0.99)
histogram = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, MAX_COUNT), max_size=30)
group = st.tuples(st.none() | st.lists(histogram, max_size=6), st.none() | histogram)


def expected(histograms: list[dict[int, int]] | None, raw: dict[int, int] | None) -> list[float | None]:
    total: Counter[int] = Counter()
    for h in [*(histograms or []), raw or {}]:
        total.update(h)
    return Histogram(dict(total)).percentiles(*QS)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60)
@given(st.lists(group, max_size=20))
def test_each_pick_is_the_merged_histograms_own(groups) -> None:
    texts = [None if hs is None else stored(hs) for hs, _ in groups]
    raws = [raw for _, raw in groups]
    assert merged_percentiles(texts, raws, QS) == [expected(hs, raw) for hs, raw in groups]


def test_groups_past_one_chunk_are_each_picked_from_their_own_counts() -> None:
    groups = [([{i % BUCKETS: 1 + i, (i * 7) % BUCKETS: 2}], {(i * 13) % BUCKETS: 3} if i % 3 else None)
              for i in range(picks.CHUNK * 2 + 17)]  # fmt: skip
    texts = [stored(hs) for hs, _ in groups]
    assert merged_percentiles(texts, [raw for _, raw in groups], QS) == [expected(hs, raw) for hs, raw in groups]


def test_a_group_without_samples_has_no_percentiles() -> None:
    assert merged_percentiles([None, stored([{}, {}]), stored([{4: 2}])], [None, None, {}], QS) == [
        [None, None, None],
        [None, None, None],
        expected([{4: 2}], None),
    ]


def test_a_bucket_index_no_histogram_has_is_refused_as_the_group_by_group_merge_refuses_it() -> None:
    # No rollup stores one; the groups are then merged one by one as merge_histograms merges them, and picking
    # the bad bucket fails loudly rather than reading as some other bucket.
    texts = [stored([{5: 2}, {9: 1}]), stored([{BUCKETS + 3: 2, 5: 1}])]
    with pytest.raises(ValueError, match="bucket index"):
        merged_percentiles(texts, [None, None], QS)
    with pytest.raises(ValueError, match="bucket index"):
        merged_percentiles(texts[:1], [{BUCKETS: 1}], QS)


def test_bytes_that_are_not_whole_entries_are_refused() -> None:
    # Two broken values whose lengths add up to whole entries must not be read as one.
    texts = [pack({5: 2}) + b"\x00", pack({9: 1})[1:]]
    with pytest.raises(ValueError, match="whole 6-byte entries"):
        merged_percentiles(texts, [None, None], QS)
