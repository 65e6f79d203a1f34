"""Saving an objective with a new condition empties its counts (they were another objective's) and queues its
rebuild; calls stored meanwhile are not counted by ingest but by the rebuild, under the new condition. Saving
without a change of condition keeps the counts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes.slos.rebuild import rebuild
from probes.slos.services import objective_saved
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, current, hour_ago, ingest

NONE = {"good": 0, "degraded": 0, "bad": 0, "missed": 0, "excluded": 0}


@pytest.mark.django_db(transaction=True)
def test_a_new_threshold_empties_the_counts_until_the_rebuild_counts_every_call_under_it():
    probe = ProbeFactory()
    region = probe.regions.get()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    start = hour_ago()
    assert ingest(probe, region, [(start, {"ttft_ms": 200.0}), (start + timedelta(minutes=1), {"ttft_ms": 700.0})])
    assert counts(objective) == {**NONE, "good": 1, "bad": 1}

    objective.name = "renamed"
    objective.save()
    assert objective_saved(objective.id) is False  # the condition is the same: the counts stay
    assert counts(objective) == {**NONE, "good": 1, "bad": 1}

    objective.ttft_threshold_ms = 800
    objective.save()
    assert objective_saved(objective.id) is True
    objective.refresh_from_db()
    assert (objective.counted_condition, objective.exact_since, counts(objective)) == ("", None, NONE)

    # Stored while the objective waits for its rebuild: skipped by ingest, counted by the rebuild.
    assert ingest(probe, region, [(start + timedelta(minutes=2), {"ttft_ms": 900.0})]) == 1
    assert counts(objective) == NONE

    rebuild(objective.id)
    objective.refresh_from_db()
    assert objective.counted_condition == objective.condition_fingerprint()
    assert counts(objective) == {**NONE, "good": 2, "bad": 1}
    # Current again: ingest counts for it.
    assert ingest(probe, region, [(start + timedelta(minutes=3), {"ttft_ms": 100.0})]) == 1
    assert counts(objective) == {**NONE, "good": 3, "bad": 1}
