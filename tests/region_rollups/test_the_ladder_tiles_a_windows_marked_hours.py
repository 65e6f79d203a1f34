"""ladder_tiles: the region rollup blocks a reading of every target uses are
EPOCH-aligned, inside the window, made of marked hours only, cover every
marked hour of the window exactly once, and are the largest that fit."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from probes.readings.plan import ladder_tiles
from probes.rollups.periods import EPOCH, GRAINS, HOUR, block_start

WEEK = timedelta(days=7)
# A Thursday midnight: the start of a 7-day block.
T0 = block_start(datetime(2026, 3, 20, tzinfo=UTC), WEEK)


def hours(start: datetime, count: int) -> set[datetime]:
    return {start + HOUR * i for i in range(count)}


def check(since: datetime, until: datetime, marked: set[datetime]) -> list[tuple[int, datetime]]:
    tiles = ladder_tiles(since, until, marked)
    covered: list[datetime] = []
    for span, start in tiles:
        assert span in GRAINS
        assert (start - EPOCH) % (HOUR * span) == timedelta(0), "aligned to EPOCH"
        assert since <= start and start + HOUR * span <= until, "inside the window"
        covered += sorted(hours(start, span))
    assert len(covered) == len(set(covered)), "no hour twice"
    assert set(covered) == {h for h in marked if since <= h and h + HOUR <= until}
    return tiles


def test_seven_day_blocks_start_on_thursdays():
    assert T0.weekday() == 3 and T0.hour == 0


def test_nothing_marked_gives_no_blocks():
    assert check(T0, T0 + WEEK, set()) == []


def test_a_whole_marked_week_is_one_block():
    assert check(T0, T0 + WEEK, hours(T0 - WEEK, 3 * 7 * 24)) == [(168, T0)]


def test_partial_edge_hours_and_misaligned_edges_step_down_the_ladder():
    since = T0 - 5 * HOUR - timedelta(minutes=20)
    until = T0 + WEEK + 14 * HOUR + timedelta(seconds=1)
    tiles = check(since, until, hours(T0 - WEEK, 3 * 7 * 24))
    assert tiles == [
        (1, T0 - 5 * HOUR),
        (1, T0 - 4 * HOUR),
        (3, T0 - 3 * HOUR),
        (168, T0),
        (12, T0 + WEEK),
        (1, T0 + WEEK + 12 * HOUR),
        (1, T0 + WEEK + 13 * HOUR),
    ]


def test_one_unmarked_hour_breaks_every_block_holding_it_and_only_those():
    marked = hours(T0, 7 * 24) - {T0 + 2 * 24 * HOUR + 7 * HOUR}
    tiles = check(T0, T0 + WEEK, marked)
    assert tiles == [
        (24, T0),
        (24, T0 + 24 * HOUR),
        (3, T0 + 48 * HOUR),
        (3, T0 + 51 * HOUR),
        (1, T0 + 54 * HOUR),
        (1, T0 + 56 * HOUR),
        (3, T0 + 57 * HOUR),
        (12, T0 + 60 * HOUR),
        (24, T0 + 72 * HOUR),
        (24, T0 + 96 * HOUR),
        (24, T0 + 120 * HOUR),
        (24, T0 + 144 * HOUR),
    ]


def test_marks_outside_the_window_are_ignored():
    assert check(T0 + HOUR, T0 + 2 * HOUR, hours(T0 - 48 * HOUR, 200)) == [(1, T0 + HOUR)]
    assert check(T0 + 10 * HOUR, T0 + 10 * HOUR + timedelta(minutes=59), hours(T0, 48)) == []


@pytest.mark.parametrize("seed", range(40))
def test_random_marks_and_windows_are_tiled_by_the_largest_blocks_that_fit(seed):
    rng = random.Random(seed)
    start = T0 - HOUR * rng.randrange(0, 400)
    marked = {h for h in hours(start, 900) if rng.random() < (0.999 if seed % 2 else 0.95)}
    since = start + timedelta(minutes=rng.randrange(0, 60 * 100))
    until = since + timedelta(minutes=rng.randrange(0, 60 * 800))
    tiles = check(since, until, marked)
    # No block could have been a larger one.
    for span, a in tiles:
        for grain in GRAINS:
            if grain > span and block_start(a, HOUR * grain) == a and a + HOUR * grain <= until:
                assert not hours(a, grain) <= marked
    assert tiles == sorted(tiles, key=lambda t: t[1])
