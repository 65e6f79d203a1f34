"""An objective's regions restrict the calls it counts; without regions the keys of its mix do; with neither,
every region counts."""

from __future__ import annotations

import pytest

from probes.models import SLOHourCount
from probes.slos.counting import count_pending
from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, RegionFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import current, hour_ago, ingest


def _regions(objective) -> set[int]:
    count_pending()
    return set(SLOHourCount.objects.filter(objective=objective).values_list("region_id", flat=True))


@pytest.mark.django_db(transaction=True)
def test_regions_then_the_mix_then_every_region():
    london, ashburn, tokyo = RegionFactory(), RegionFactory(), RegionFactory()
    probe = ProbeFactory(regions=[london, ashburn, tokyo])
    chosen = current(ServiceLevelObjectiveFactory(targets=[probe.target], regions=[london]))
    # The regions win over the mix when both are given.
    chosen_and_mix = current(
        ServiceLevelObjectiveFactory(targets=[probe.target], regions=[london], mix={ashburn.slug: 100})
    )
    mixed = current(ServiceLevelObjectiveFactory(targets=[probe.target], mix={ashburn.slug: 60, tokyo.slug: 40}))
    everywhere = current(ServiceLevelObjectiveFactory(targets=[probe.target]))
    slot = hour_ago()
    for region in (london, ashburn, tokyo):
        assert ingest(probe, region, [(slot, {"ttft_ms": 200.0})]) == 1

    expected = {
        chosen.id: {london.id},
        chosen_and_mix.id: {london.id},
        mixed.id: {ashburn.id, tokyo.id},
        everywhere.id: {london.id, ashburn.id, tokyo.id},
    }
    objectives = (chosen, chosen_and_mix, mixed, everywhere)
    assert {o.id: _regions(o) for o in objectives} == expected
    for objective in objectives:
        rebuild(objective.id)
    assert {o.id: _regions(o) for o in objectives} == expected
