"""Window and rollup readings are right at every moment of the day, not only at the `now` fixture's 00:30: the
tests that reason about the current hour and day, which run at 00:30 in their own modules (a day's window crosses
midnight, the current day has one hour), run again here with the clock at 12:30 (every window of a few hours inside
one day) and 23:30 (the day's last hour is the current one, and the next hour is another day)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from tests.readings.test_a_24_hour_series_reads_its_whole_marked_hours_from_rollups import (
    test_a_24_hour_series_reads_its_whole_marked_hours_from_rollups,  # noqa: F401
)
from tests.readings.test_a_series_bucket_with_marked_hours_and_raw_rows_merges_both import (
    test_a_bucket_of_marked_hours_and_raw_rows_ranks_all_of_them,  # noqa: F401
)
from tests.readings.test_a_window_starting_early_in_a_marked_hour_reads_it_from_its_rollups_less_the_rows_before import (  # noqa: E501
    test_a_first_hour_whose_raw_rows_may_be_pruned_is_read_raw,  # noqa: F401
    test_a_series_first_bucket_is_its_hour_less_the_rows_before_the_window,  # noqa: F401
    test_the_first_hour_is_its_rollups_less_its_rows_before_the_window,  # noqa: F401
)
from tests.readings.test_an_unmarked_hour_is_read_from_its_rollups_up_to_its_cut_and_the_rows_above_it import (
    test_a_window_ending_before_the_newest_row_the_rollups_count_reads_the_hour_raw,  # noqa: F401
    test_an_hour_a_late_row_unmarked_is_its_rollups_plus_the_late_row,  # noqa: F401
    test_the_current_hour_is_its_rollups_plus_the_rows_stored_after_its_rebuild,  # noqa: F401
    test_the_last_bucket_of_a_series_counts_the_current_hours_rollups_and_tail,  # noqa: F401
)
from tests.readings.test_stats_queries import (  # the module's own fixtures come with its tests
    probe,  # noqa: F401
    regions,  # noqa: F401
    target,  # noqa: F401
    test_a_late_row_in_a_rolled_up_hour_is_read_from_raw_rows_until_the_hour_is_rebuilt,  # noqa: F401
    test_a_long_window_is_read_from_rollups_with_the_same_accuracy_even_after_raw_rows_are_gone,  # noqa: F401
)
from tests.support import clock_at_half_past

# 00:30 is the `now` fixture's own hour: the imported tests' own runs.
HOURS = (12, 23)


@pytest.fixture(params=HOURS, ids=lambda hour: f"at {hour:02d}:30")
def now(request) -> Iterator[datetime]:
    """The suite's `now` at another moment of the day, for the tests imported above."""
    with clock_at_half_past(request.param) as moment:
        yield moment
