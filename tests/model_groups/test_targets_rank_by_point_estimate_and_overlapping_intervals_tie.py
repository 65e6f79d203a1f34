"""Ranking: by the point estimate of the chosen metric and percentile, 1, 2, 3 without gaps; tied_with names the
targets whose interval overlaps; the region x target matrix marks each region's best and its ties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.readings import Selection, leaderboard, leaderboard_matrix
from tests.factories import ProbeFactory, RegionFactory, TargetFactory
from tests.model_groups.support import store

pytestmark = pytest.mark.django_db
STEP = timedelta(seconds=20)


@pytest.fixture
def three():
    """From one region: "fast" clearly ahead; "close" and "also close" overlapping each other, behind it."""
    until = datetime.now(UTC)
    region = RegionFactory(slug="zz-one")
    made = {}
    for name, base in (("fast", 100.0), ("close", 300.0), ("also close", 302.0)):
        probe = ProbeFactory(target=TargetFactory(name=name), regions=[region])
        store(probe, region, [base + (i % 20) for i in range(200)], until - timedelta(hours=2), STEP)
        made[name] = probe.target_id
    return made, Selection(since=until - timedelta(hours=3), until=until)


def test_ranks_follow_the_point_estimate_and_overlaps_are_ties(three):
    ids, f = three
    rows = leaderboard(list(ids.values()), f, region="zz-one")

    assert [r["target_name"] for r in rows] == ["fast", "close", "also close"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    by_name = {r["target_name"]: r for r in rows}
    assert by_name["fast"]["tied_with"] == []
    assert by_name["close"]["tied_with"] == [ids["also close"]]
    assert by_name["also close"]["tied_with"] == [ids["close"]]
    low, high = by_name["fast"]["p50_ttft_ci_ms"]
    assert low <= by_name["fast"]["p50_ttft_ms"] <= high


def test_tokens_per_second_ranks_the_highest_first(three):
    ids, f = three
    f.metric = "tokens_per_s"
    rows = leaderboard(list(ids.values()), f, region="zz-one")
    # Every stored row has the same tokens/s (the factory's): a tie throughout, broken by name.
    assert [r["target_name"] for r in rows] == ["also close", "close", "fast"]
    assert all(len(r["tied_with"]) == 2 for r in rows)


def test_the_matrix_marks_the_winner_and_its_ties_per_region():
    until = datetime.now(UTC)
    north, south = RegionFactory(slug="zz-north", name="North"), RegionFactory(slug="zz-south", name="South")
    a, b = TargetFactory(name="A"), TargetFactory(name="B")
    pa, pb = ProbeFactory(target=a, regions=[north, south]), ProbeFactory(target=b, regions=[north, south])
    start = until - timedelta(hours=2)
    store(pa, north, [100.0 + (i % 20) for i in range(200)], start, STEP)
    store(pb, north, [500.0 + (i % 20) for i in range(200)], start, STEP)
    store(pa, south, [300.0 + (i % 20) for i in range(200)], start, STEP)
    store(pb, south, [301.0 + (i % 20) for i in range(200)], start, STEP)

    grid = leaderboard_matrix([a.id, b.id], Selection(since=until - timedelta(hours=3), until=until))

    cells = {(row["region"], c["target"]): c for row in grid for c in row["cells"]}
    assert [row["region"] for row in grid] == ["zz-north", "zz-south"]
    assert (cells["zz-north", a.id]["winner"], cells["zz-north", b.id]["winner"]) == (True, False)
    assert cells["zz-north", b.id]["tied"] is False
    assert (cells["zz-south", a.id]["winner"], cells["zz-south", b.id]["tied"]) == (True, True)
