"""A percentile whose 95 % interval cannot be formed from the calls there are: its CI is None and the row
says why, naming how many values it needs and how many there are; the point estimate is still given."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.readings import Selection, leaderboard
from probes.readings.leaderboard import minimum_values
from tests.factories import ProbeFactory
from tests.model_groups.support import store

pytestmark = pytest.mark.django_db


def test_forty_calls_give_a_p50_interval_but_no_p95_one():
    until = datetime.now(UTC)
    probe = ProbeFactory()
    store(probe, probe.regions.get(), [100.0 + i for i in range(40)], until - timedelta(hours=1), timedelta(minutes=1))

    (row,) = leaderboard([probe.target_id], Selection(since=until - timedelta(hours=2), until=until))

    assert row["p50_ttft_ci_ms"] is not None
    assert row["p95_ttft_ci_ms"] is None
    assert row["p95_ttft_ms"] is not None
    need = minimum_values(0.95)
    assert need > 40
    assert row["reason"] == f"p95 needs at least {need} values of ttft for a 95 % interval; this target has 40"


def test_enough_calls_give_both_intervals_and_no_reason():
    until = datetime.now(UTC)
    probe = ProbeFactory()
    count = minimum_values(0.95)
    store(
        probe, probe.regions.get(), [100.0 + i for i in range(count)], until - timedelta(hours=2), timedelta(seconds=30)
    )

    (row,) = leaderboard([probe.target_id], Selection(since=until - timedelta(hours=3), until=until))

    assert row["p50_ttft_ci_ms"] is not None and row["p95_ttft_ci_ms"] is not None
    assert "reason" not in row


def test_a_target_without_calls_has_no_figures_and_says_so():
    until = datetime.now(UTC)
    probe = ProbeFactory()

    (row,) = leaderboard([probe.target_id], Selection(since=until - timedelta(hours=1), until=until))

    assert (row["n"], row["p50_ttft_ms"], row["p50_ttft_ci_ms"], row["success_ratio"]) == (0, None, None, None)
    assert "this target has 0" in row["reason"]
