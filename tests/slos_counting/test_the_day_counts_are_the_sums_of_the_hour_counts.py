"""The day counts readers take a window's whole days from are, at every step, the sums of the hour counts: as
ingest stores calls across midnight, as the missed-run pass records runs nobody picked up and a late measurement
takes one back, and after a rebuild."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Sum
from django.db.models.functions import TruncDay

from probes.fleet.missed import close_slots
from probes.models import MissedRun, Probe, Region, SLODayCount, SLOHourCount
from probes.slos.counting import count_pending
from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import FIELDS, current, ingest


def _by_day(model, column: str, objective) -> dict:
    count_pending()
    rows = (
        model.objects.filter(objective=objective)
        .annotate(d=TruncDay(column, tzinfo=UTC))
        .values("d", "target_id", "region_id")
        .annotate(**{f: Sum(f) for f in FIELDS})
    )
    return {(r["d"], r["target_id"], r["region_id"]): tuple(r[f] for f in FIELDS) for r in rows}


@pytest.mark.django_db(transaction=True)
def test_day_counts_follow_ingest_missed_runs_late_results_and_a_rebuild():
    probe = ProbeFactory()
    region = probe.regions.get()
    now = datetime.now(UTC)
    Probe.objects.filter(id=probe.id).update(updated_at=now - timedelta(days=3))
    Region.objects.filter(id=region.id).update(updated_at=now - timedelta(days=3))
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
    slots = [midnight + timedelta(minutes=m) for m in (-70, -20, -1, 0, 1, 45, 130)]
    assert ingest(probe, region, [(s, {"ttft_ms": 200.0 + 100 * k}) for k, s in enumerate(slots)]) == len(slots)
    assert close_slots(now) > 0
    slot = MissedRun.objects.filter(probe=probe).order_by("scheduled_for").first().scheduled_for
    assert ingest(probe, region, [(slot, {"ttft_ms": 900.0})]) == 1  # a missed run taken back

    hours = _by_day(SLOHourCount, "hour", objective)
    assert len(hours) >= 2  # both sides of midnight
    assert _by_day(SLODayCount, "day", objective) == hours

    rebuild(objective.id)
    assert _by_day(SLODayCount, "day", objective) == _by_day(SLOHourCount, "hour", objective) == hours
