"""The five-minute counts the burn windows read in the last hours are, at every step, the hour counts cut finer:
as calls are counted across an hour's edge, as the missed-run pass records runs nobody picked up and a late
measurement takes one back, and after a rebuild. Those older than the hours kept are deleted as the counter runs."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, timedelta

import pytest

from probes.fleet.missed import close_slots
from probes.models import MissedRun, SLOFiveMinuteCount, SLOHourCount
from probes.slos.classify import FIVE_MINUTES_KEPT_HOURS
from probes.slos.counting import count_pending
from probes.slos.rebuild import rebuild
from tests.factories import ServiceLevelObjectiveFactory, SLOFiveMinuteCountFactory
from tests.slos_counting.conftest import FIELDS, current, ingest, scheduled_since


def _hours(objective, model, column: str) -> dict:
    count_pending()
    totals: Counter = Counter()
    for row in model.objects.filter(objective=objective):
        hour = getattr(row, column).astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        for f in FIELDS:
            totals[(hour, row.target_id, row.region_id, f)] += getattr(row, f)
    return {key: n for key, n in totals.items() if n}


@pytest.mark.django_db(transaction=True)
def test_five_minute_counts_sum_to_the_hour_counts_and_old_ones_are_pruned():
    probe, region, now = scheduled_since(3, interval_seconds=300)
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    edge = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    slots = [edge + timedelta(minutes=m, seconds=17) for m in (-21, -11, -1, 0, 4, 5, 9, 33)]
    assert ingest(probe, region, [(s, {"ttft_ms": 200.0 + 150 * k}) for k, s in enumerate(slots)]) == len(slots)
    assert close_slots(now) > 0
    late = MissedRun.objects.filter(probe=probe).order_by("scheduled_for").first().scheduled_for
    assert ingest(probe, region, [(late, {"ttft_ms": 900.0})]) == 1  # a missed run taken back

    hours = _hours(objective, SLOHourCount, "hour")
    assert {key[0] for key in hours} >= {edge - timedelta(hours=1), edge}  # both sides of the hour's edge
    assert _hours(objective, SLOFiveMinuteCount, "start") == hours
    starts = set(SLOFiveMinuteCount.objects.filter(objective=objective).values_list("start", flat=True))
    assert all(start.minute % 5 == 0 and start.second == 0 for start in starts)

    rebuild(objective.id)
    assert _hours(objective, SLOFiveMinuteCount, "start") == _hours(objective, SLOHourCount, "hour") == hours

    old = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=FIVE_MINUTES_KEPT_HOURS + 1)
    SLOFiveMinuteCountFactory(objective=objective, target=probe.target, region=region, start=old, good=1)
    ingest(probe, region, [(now - timedelta(seconds=5), {"ttft_ms": 100.0})])
    count_pending()
    assert not SLOFiveMinuteCount.objects.filter(objective=objective, start__lte=old).exists()
