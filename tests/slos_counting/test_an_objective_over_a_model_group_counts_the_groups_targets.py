"""An objective over a model group counts the calls of every target in the group, and no other target's."""

from __future__ import annotations

import pytest

from probes.models import SLOHourCount
from probes.slos.counting import count_pending
from probes.slos.rebuild import rebuild
from tests.factories import ModelGroupFactory, ProbeFactory, RegionFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import current, hour_ago, ingest


def _per_target(objective) -> dict[int, tuple[int, int]]:
    count_pending()
    return {
        row.target_id: (row.good, row.bad) for row in SLOHourCount.objects.filter(objective=objective).order_by("id")
    }


@pytest.mark.django_db(transaction=True)
def test_the_groups_targets_are_counted_and_a_target_outside_it_is_not():
    region = RegionFactory()
    first, second, outside = (ProbeFactory(regions=[region]) for _ in range(3))
    group = ModelGroupFactory(targets=[first.target, second.target])
    objective = current(ServiceLevelObjectiveFactory(model_group=group, ttft_threshold_ms=500))
    slot = hour_ago()
    assert ingest(first, region, [(slot, {"ttft_ms": 200.0})]) == 1
    assert ingest(second, region, [(slot, {"ttft_ms": 900.0})]) == 1
    assert ingest(outside, region, [(slot, {"ttft_ms": 200.0})]) == 1

    expected = {first.target_id: (1, 0), second.target_id: (0, 1)}
    assert _per_target(objective) == expected
    rebuild(objective.id)
    assert _per_target(objective) == expected
