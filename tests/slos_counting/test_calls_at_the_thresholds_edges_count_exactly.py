"""Calls exactly at each threshold and just above it are counted good, degraded or bad exactly, by ingest as they
are stored and by a rebuild from the raw rows, and the two agree."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, current, hour_ago, ingest

# (ttft_ms, total_ms, output_tokens, outcome) -> the class under TTFT <= 500 (degraded above 300), TPOT <= 20 and
# total <= 1000. TPOT = (total - ttft) / (tokens - 1).
CALLS = [
    ((300.0, 360.0, 5, "ok"), "good"),  # exactly at the degraded threshold: not degraded
    ((300.5, 360.0, 5, "ok"), "degraded"),  # just above it
    ((500.0, 560.0, 5, "ok"), "degraded"),  # exactly at the TTFT threshold: still good
    ((500.5, 560.0, 5, "ok"), "bad"),  # just above it
    ((200.0, 280.0, 5, "ok"), "good"),  # TPOT exactly 20
    ((200.0, 280.04, 5, "ok"), "bad"),  # TPOT 20.01
    ((200.0, 1000.0, 41, "ok"), "good"),  # total exactly 1000 (TPOT 20)
    ((200.0, 1000.5, 81, "ok"), "bad"),  # total just above (TPOT 10)
    ((100.0, 150.0, 5, "timeout"), "bad"),  # fast but failed
    ((100.0, 150.0, 1, "ok"), "bad"),  # one output token: no TPOT, the TPOT condition fails
    ((None, None, None, "ok"), "bad"),  # no first token at all
]


def _expected() -> dict[str, int]:
    classes = [cls for _, cls in CALLS]
    return {
        "good": sum(c in ("good", "degraded") for c in classes),
        "degraded": classes.count("degraded"),
        "bad": classes.count("bad"),
        "missed": 0,
        "excluded": 0,
    }


@pytest.mark.django_db(transaction=True)
def test_calls_at_and_just_above_each_threshold_count_exactly_at_ingest_and_after_a_rebuild():
    probe = ProbeFactory()
    region = probe.regions.get()
    objective = current(
        ServiceLevelObjectiveFactory(
            targets=[probe.target],
            ttft_threshold_ms=500,
            degraded_ttft_threshold_ms=300,
            tpot_threshold_ms=20,
            total_threshold_ms=1000,
        )
    )
    start = hour_ago()
    calls = [
        (start + timedelta(minutes=k), {"ttft_ms": ttft, "total_ms": total, "output_tokens": tokens, "outcome": out})
        for k, ((ttft, total, tokens, out), _) in enumerate(CALLS)
    ]
    assert ingest(probe, region, calls) == len(CALLS)
    assert counts(objective) == _expected() == {"good": 5, "degraded": 2, "bad": 6, "missed": 0, "excluded": 0}

    done = rebuild(objective.id)
    assert counts(objective) == _expected()
    assert done.rows == len(CALLS)
    objective.refresh_from_db()
    assert objective.counted_condition == objective.condition_fingerprint()
    assert objective.exact_since == start
