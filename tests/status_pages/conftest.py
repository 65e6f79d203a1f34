"""A status page over one target measured from two regions, with an objective of 99 % calls good (TTFT at most
800 ms) counting them, and a way to place good and bad calls in time (`calls`).

Calls are stored as measurements and read as the objective reads calls not yet counted (probes.slos.counting):
so a window's burn is its bad share over 1 %, whatever the counter has done."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Measurement
from tests.factories import (
    MeasurementFactory,
    ProbeFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    StatusPageFactory,
    TargetFactory,
)
from tests.slos_pages.conftest import counted


@dataclass
class Scene:
    page: object
    target: object
    probe: object
    regions: list
    objective: object

    def calls(self, start: datetime, end: datetime, good: int, bad: int) -> None:
        """good + bad calls from the first region, slots spread over [start, end), the bad ones (timeouts) among
        them every so often."""
        n = good + bad
        step = (end - start) / n
        bad_at = {round(i * n / bad) for i in range(bad)} if bad else set()
        rows = [
            {
                "scheduled_for": start + i * step,
                "region_id": self.regions[0].id,
                **({"outcome": "timeout", "ttft_ms": None, "total_ms": None} if i in bad_at else {}),
            }
            for i in range(n)
        ]
        Measurement.objects.bulk_create(MeasurementFactory.build_rows(rows, probe=self.probe, region=self.regions[0]))


@pytest.fixture
def scene(db, settings) -> Scene:
    # Read on every request: what each test changes shows at once (tests/status_cache judges the cache).
    settings.LATENCY_STATUS_CACHE_S = 0
    regions = [RegionFactory(slug="zz-lagos", name="Lagos"), RegionFactory(slug="zz-oslo", name="Oslo")]
    target = TargetFactory(name="chat-eu", url="https://secret-host.internal.example/v1/chat/completions")
    probe = ProbeFactory(target=target, regions=regions)
    objective = counted(
        ServiceLevelObjectiveFactory(targets=[target], ttft_threshold_ms=800.0, objective_percent=99.0),
        since=datetime.now(UTC) - timedelta(days=120),
    )
    page = StatusPageFactory(slug="acme", title="Acme APIs", targets=[target], slos=[objective])
    return Scene(page, target, probe, regions, objective)
