"""The `now` fixture hands rollup tests a moment well inside an hour without
sleeping, even when the real clock is about to cross an hour's edge."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import time_machine

from probes.rollups import floor_hour
from tests.support import half_past_the_hour


def test_the_now_fixture_is_half_past_an_hour_and_returns_at_once_near_an_hours_edge(request):
    edge = datetime(2026, 3, 1, 11, 59, 30, tzinfo=UTC)
    with time_machine.travel(edge, tick=True):
        started = time.monotonic()
        now = request.getfixturevalue("now")
        waited = time.monotonic() - started
        # The code under test reads the clock: it sees the same hour as `now`.
        assert floor_hour(datetime.now(UTC)) == floor_hour(now)
    assert waited < 5
    assert now == datetime(2026, 3, 1, 11, 30, tzinfo=UTC)


def test_half_past_the_hour_is_never_after_the_real_clock():
    for minute, expected in [(0, 9), (29, 9), (30, 10), (59, 10)]:
        real = datetime(2026, 3, 1, 10, minute, 15, tzinfo=UTC)
        assert half_past_the_hour(real) == datetime(2026, 3, 1, expected, 30, tzinfo=UTC)
        assert real - half_past_the_hour(real) < timedelta(hours=1)
