"""read_window reads long raw stretches as two halves side by side (window._halves): the halves must hold exactly
the stretches' time between them, half each, a tail's id cut kept on both sides of a cut interval; short stretches
stay one read. A raw time series is cut only on a boundary of its buckets (series._raw_halves), its rolled-up
buckets into two runs of whole buckets with about half the marked hours each (series._rolled_halves)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.readings import side_by_side
from probes.readings.plan import EPOCH
from probes.readings.series import ROLLED_SPLIT_HOURS, _raw_halves, _rolled_halves
from probes.readings.window import SPLIT_MIN, _halves

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def covered(intervals: list[tuple]) -> timedelta:
    return sum((b - a for a, b, *_ in intervals), timedelta(0))


def test_one_long_interval_is_cut_where_half_its_time_has_passed() -> None:
    first, second = _halves([(T0, T0 + minutes(60))])
    assert first == [(T0, T0 + minutes(30))]
    assert second == [(T0 + minutes(30), T0 + minutes(60))]


def test_stretches_are_shared_by_time_and_a_tail_keeps_its_cut_in_both_halves() -> None:
    # A window's first partial hour, then the current hour's tail above a build's cut.
    stretches = [(T0, T0 + minutes(23)), (T0 + minutes(60), T0 + minutes(97), 4_242)]
    first, second = _halves(stretches)
    assert covered(first) == covered(second) == covered(stretches) / 2
    assert first == [(T0, T0 + minutes(23)), (T0 + minutes(60), T0 + minutes(67), 4_242)]
    assert second == [(T0 + minutes(67), T0 + minutes(97), 4_242)]


def test_whole_intervals_go_to_one_half_or_the_other() -> None:
    stretches = [(T0 + minutes(20 * i), T0 + minutes(20 * i + 10)) for i in range(4)]
    first, second = _halves(stretches)
    assert first == stretches[:2] and second == stretches[2:]


def test_short_stretches_stay_one_read() -> None:
    short = [(T0, T0 + SPLIT_MIN - timedelta(microseconds=1))]
    assert _halves(short) == [short]
    assert _halves([]) == [[]]


def test_a_raw_time_series_is_cut_on_a_bucket_boundary_so_no_bucket_is_split() -> None:
    side_by_side.enable(1)
    try:
        since = T0 + minutes(3.5)  # buckets of 2 minutes from EPOCH: 12:02, 12:04, ...
        first, second = _raw_halves([(since, since + minutes(60))], minutes(2))
        cut = first[0][1]
        assert first == [(since, cut)] and second == [(cut, since + minutes(60))]
        assert (cut - EPOCH) % minutes(2) == timedelta(0)
        assert abs((cut - since) - minutes(30)) < minutes(2)
        # A window no bucket boundary divides, and a short one, stay whole.
        assert _raw_halves([(since, since + minutes(60))], minutes(120)) == [[(since, since + minutes(60))]]
        assert _raw_halves([(since, since + minutes(20))], minutes(2)) == [[(since, since + minutes(20))]]
    finally:
        side_by_side.disable()
    # Where reads are not run side by side (tests, commands), nothing is cut.
    assert _raw_halves([(since, since + minutes(60))], minutes(2)) == [[(since, since + minutes(60))]]


def buckets_of(hours_each: list[int], size: timedelta = timedelta(hours=12)) -> dict[datetime, list[datetime]]:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    return {
        start + size * i: [start + size * i + timedelta(hours=h) for h in range(n)] for i, n in enumerate(hours_each)
    }


def test_rolled_up_buckets_are_shared_as_whole_buckets_by_their_hours() -> None:
    side_by_side.enable(1)
    try:
        # 60 buckets of 12 marked hours but a few with fewer (hours not rolled up yet, or pruned).
        missing = buckets_of([12] * 20 + [3] * 10 + [12] * 30)
        first, second = _rolled_halves(missing)
        assert set(first) | set(second) == set(missing) and not set(first) & set(second)
        assert max(first) < min(second)
        assert all(first[s] == missing[s] for s in first) and all(second[s] == missing[s] for s in second)
        hours = [sum(map(len, half.values())) for half in (first, second)]
        assert abs(hours[0] - hours[1]) <= 12
        # Too few hours, or one bucket, stay one read.
        few = buckets_of([1] * (ROLLED_SPLIT_HOURS - 1), timedelta(hours=1))
        assert _rolled_halves(few) == [few]
        one = buckets_of([ROLLED_SPLIT_HOURS * 2], timedelta(days=30))
        assert _rolled_halves(one) == [one]
    finally:
        side_by_side.disable()
    # Where reads are not run side by side (tests, commands), nothing is cut.
    assert _rolled_halves(missing) == [missing]
