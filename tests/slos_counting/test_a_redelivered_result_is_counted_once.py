"""A message delivered twice (a worker's retry, the broker's redelivery) stores its slots once and counts them once:
the objectives count only the rows ingest's insert-or-ignore stored."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, current, hour_ago, ingest


@pytest.mark.django_db(transaction=True)
def test_a_message_delivered_twice_counts_its_calls_once():
    probe = ProbeFactory()
    region = probe.regions.get()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    start = hour_ago()
    calls = [(start, {"ttft_ms": 200.0}), (start + timedelta(minutes=1), {"ttft_ms": 900.0})]
    assert ingest(probe, region, calls) == 2
    assert ingest(probe, region, calls) == 0
    assert counts(objective) == {"good": 1, "degraded": 0, "bad": 1, "missed": 0, "excluded": 0}
