"""The `now` fixture hands every test the same moment of the day, 00:30 UTC, whatever the real clock says, at
once (no waiting for a safe moment near an hour's edge) and in the real past (the latest such moment)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from probes.rollups import floor_hour
from tests.support import half_past


@pytest.mark.parametrize("real", ["00:00:05", "00:29:59", "00:30:00", "11:59:30", "23:59:59"])
def test_the_now_fixture_is_half_past_midnight_whatever_the_real_time_of_day(request, real):
    real_moment = datetime.fromisoformat(f"2026-03-01T{real}+00:00")
    with time_machine.travel(real_moment, tick=True):
        now = request.getfixturevalue("now")
        # The code under test reads the moved clock: it sees the fixture's hour.
        assert floor_hour(datetime.now(UTC)) == floor_hour(now)
    assert (now.hour, now.minute, now.second, now.microsecond) == (0, 30, 0, 0)
    assert timedelta(0) <= real_moment - now < timedelta(days=1)


@pytest.mark.parametrize("hour", [0, 12, 23])
def test_half_past_an_hour_is_the_latest_one_not_after_the_real_clock(hour):
    for real, expected_day in [("00:00:00", 28), ("12:29:59", 28 if hour >= 12 else 1), ("23:59:59", 1)]:
        moment = half_past(hour, datetime.fromisoformat(f"2026-03-01T{real}+00:00"))
        assert moment == datetime(2026, 2 if expected_day == 28 else 3, expected_day, hour, 30, tzinfo=UTC), real
