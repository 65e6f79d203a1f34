"""exclude_rate_limited off is how every objective was counted before the field existed (a refused call is a failed
call: bad), so an objective with it off keeps the fingerprint its counts were made under, and an upgrade empties
nobody's counts (the hours older than the raw rows kept could not be recounted). Turning it on is a change of the
good call like any other."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest

from probes.models import ServiceLevelObjective, SLOHourCount
from probes.slos.services import reconcile
from tests.factories import RegionFactory, ServiceLevelObjectiveFactory, SLOHourCountFactory

pytestmark = pytest.mark.django_db
SINCE = datetime(2026, 11, 6, tzinfo=UTC)


def fingerprint_before_the_field(o: ServiceLevelObjective) -> str:
    # ServiceLevelObjective.condition_fingerprint as it was written before exclude_rate_limited (migration 0045).
    condition = [
        o.ttft_threshold_ms,
        o.tpot_threshold_ms,
        o.total_threshold_ms,
        o.degraded_ttft_threshold_ms,
        o.exclude_silences,
        o.enabled,
        sorted(o.targets.values_list("id", flat=True)),
        o.model_group_id,
        [],
        sorted(o.regions.values_list("id", flat=True)),
        [],
    ]
    return hashlib.sha256(json.dumps(condition).encode()).hexdigest()


def test_an_objective_counted_before_the_field_keeps_its_counts_and_turning_it_on_empties_them(
    django_capture_on_commit_callbacks,
):
    objective = ServiceLevelObjectiveFactory(tpot_threshold_ms=40.0, regions=[RegionFactory()])
    old = fingerprint_before_the_field(objective)
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(counted_condition=old, exact_since=SINCE)
    SLOHourCountFactory(objective=objective, target=objective.targets.get(), hour=SINCE)

    assert objective.condition_fingerprint() == old
    assert reconcile() == []
    assert SLOHourCount.objects.filter(objective=objective).count() == 1

    ServiceLevelObjective.objects.filter(pk=objective.pk).update(exclude_rate_limited=True)
    with django_capture_on_commit_callbacks(execute=True):
        assert reconcile() == [objective.pk]
    objective.refresh_from_db()
    assert (objective.counted_condition, objective.exact_since) == ("", None)
    assert not SLOHourCount.objects.filter(objective=objective).exists()
