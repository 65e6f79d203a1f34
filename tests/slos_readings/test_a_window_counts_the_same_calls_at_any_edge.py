"""An objective's counts in any window [since, until) are exactly the calls whose slot lies in it, whether the
window is whole hours (read from the hour counts), inside one hour, or crosses hours at odd minutes (its partial
hours classified from the raw rows and missed runs by the same SQL): a 5-minute burn and a 30-day attainment
count alike."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes.readings.slos import counts_in
from probes.slos.rebuild import rebuild
from tests.factories import MissedRunFactory, ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import current, hour_ago, ingest

# (ttft_ms, outcome) -> class under TTFT <= 500 with degraded above 300
KINDS = [((200.0, "ok"), "good"), ((400.0, "ok"), "degraded"), ((900.0, "ok"), "bad"), ((100.0, "timeout"), "bad")]


def _expected(calls, missed, since, until) -> dict[str, int]:
    inside = [cls for slot, cls in calls if since <= slot < until]
    gone = sum(since <= slot < until for slot in missed)
    return {
        "good": sum(c in ("good", "degraded") for c in inside),
        "degraded": inside.count("degraded"),
        "bad": inside.count("bad") + gone,
        "missed": gone,
    }


@pytest.mark.django_db(transaction=True)
def test_windows_with_whole_partial_and_inner_hours_count_exactly_the_calls_in_them():
    probe = ProbeFactory()
    region = probe.regions.get()
    objective = current(
        ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500, degraded_ttft_threshold_ms=300)
    )
    base = hour_ago() - timedelta(hours=2)
    calls, missed = [], []
    for k in range(26):  # every 7 minutes over three hours; every fifth slot nobody picked up
        slot = base + timedelta(minutes=7 * k, seconds=k)
        if k % 5 == 4:
            missed.append(slot)
            continue
        (ttft, outcome), cls = KINDS[k % len(KINDS)]
        calls.append((slot, cls, {"ttft_ms": ttft, "outcome": outcome, "total_ms": ttft + 50}))
    assert ingest(probe, region, [(slot, fields) for slot, _, fields in calls]) == len(calls)
    for slot in missed:
        MissedRunFactory(probe=probe, region=region, scheduled_for=slot)
    rebuild(objective.id)  # counts the missed runs too
    calls = [(slot, cls) for slot, cls, _ in calls]

    minute = timedelta(minutes=1)
    windows = {
        "whole hours": (base, base + timedelta(hours=3)),
        "crossing two edges": (base + 23 * minute, base + 157 * minute),
        "inside one hour": (base + 62 * minute, base + 72 * minute),
        "an hour from mid-hour": (base + 90 * minute, base + 150 * minute),
        "one whole hour and a tail": (base + 60 * minute, base + 131 * minute),
        "a head and one whole hour": (base + 37 * minute, base + 120 * minute),
        "on a call's slot": (calls[3][0], calls[9][0]),
    }
    got = counts_in([objective.id], windows, by_cell=False)
    for label, (since, until) in windows.items():
        c = got.get((objective.id, label))
        counted = {"good": c.good, "degraded": c.degraded, "bad": c.bad, "missed": c.missed} if c else None
        assert counted == _expected(calls, missed, since, until), label

    by_cell = counts_in([objective.id], {"all": windows["crossing two edges"]})
    assert list(by_cell) == [(objective.id, "all", probe.target_id, region.id)]
