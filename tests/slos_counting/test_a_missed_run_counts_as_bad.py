"""A run nobody picked up counts as bad and as missed, in the hour of its slot, once however often slots are
closed; a measurement that still arrives for the slot wins (as on every other page): the missed run is taken back
and the call counted instead. A rebuild gives the same counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.fleet.missed import close_slots
from probes.models import MissedRun, Probe, Region
from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, current, ingest


@pytest.mark.django_db(transaction=True)
def test_missed_runs_are_bad_once_until_a_late_measurement_replaces_one():
    probe = ProbeFactory()
    region = probe.regions.get()
    now = datetime.now(UTC)
    # Created long ago: slots before a probe's or region's last change are never missed (probes.fleet.missed).
    Probe.objects.filter(id=probe.id).update(updated_at=now - timedelta(days=2))
    Region.objects.filter(id=region.id).update(updated_at=now - timedelta(days=2))
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    missed = close_slots(now)
    assert missed > 1
    assert close_slots(now) == 0  # the same slots closed again record nothing, and count nothing
    assert counts(objective) == {"good": 0, "degraded": 0, "bad": missed, "missed": missed, "excluded": 0}

    slot = MissedRun.objects.filter(probe=probe).order_by("scheduled_for").first().scheduled_for
    assert ingest(probe, region, [(slot, {"ttft_ms": 200.0})]) == 1
    after = {"good": 1, "degraded": 0, "bad": missed - 1, "missed": missed - 1, "excluded": 0}
    assert counts(objective) == after

    done = rebuild(objective.id)
    assert (done.missed, counts(objective)) == (missed - 1, after)
