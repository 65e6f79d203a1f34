"""slot_bounds rounds the slot rule's range out to whole UTC days (probes.slot_time): the bounds hold every row a
started_at window holds, name exactly the days (partitions) the rule's own range reaches, and never look like a
condition narrower than a day to the planner."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from probes.partitions import days_between
from probes.slot_time import SLOT_EARLY, SLOT_LATE, slot_bounds

DAY = timedelta(days=1)


def midnight(when: datetime) -> bool:
    return (
        when.tzinfo is not None
        and when.utcoffset() == timedelta(0)
        and when == when.replace(hour=0, minute=0, second=0, microsecond=0)
    )


def test_bounds_are_utc_midnights_around_the_rules_range_and_reach_the_same_days() -> None:
    rng = random.Random(7)
    base = datetime(2026, 3, 1, tzinfo=UTC)
    windows = [
        (base + timedelta(hours=1), base + timedelta(hours=2)),  # the rule reaches back into the day before
        (base + SLOT_LATE, base + timedelta(hours=2)),  # exactly at midnight after SLOT_LATE
        (base + timedelta(hours=5), base + DAY - SLOT_EARLY),  # ends exactly at the next midnight
    ]
    for _ in range(300):
        since = base + timedelta(seconds=rng.randrange(0, 40 * 86_400))
        windows.append((since, since + timedelta(seconds=rng.randrange(1, 8 * 86_400))))
    for since, until in windows:
        low, high = slot_bounds(since, until)
        exact_low, exact_high = since - SLOT_LATE, until + SLOT_EARLY
        assert midnight(low) and midnight(high), (since, until, low, high)
        assert exact_low - DAY < low <= exact_low and exact_high <= high < exact_high + DAY
        assert days_between(low, high) == days_between(exact_low, exact_high)


def test_a_window_in_another_zone_is_bounded_by_utc_days() -> None:
    paris = timezone(timedelta(hours=1))
    since = datetime(2026, 3, 10, 0, 30, tzinfo=paris)  # 23:30 UTC the day before
    low, high = slot_bounds(since, since + timedelta(minutes=10))
    assert (low, high) == (datetime(2026, 3, 9, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC))
