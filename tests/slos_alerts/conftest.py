"""An objective of 99 % good calls (TTFT at most 1 s) over one target measured from three regions, and ways to place
calls in time so that each burn-rate window reads a known burn: the world the burn-rate alert tests judge.

Passes run as if at NOW, a whole hour: the 5- and 30-minute windows end inside it and are read from raw rows, the
1-hour and longer windows are whole hours read from the hour counts (probes.readings.slos). Raw rows are stored as
measurements and counted by the objective's real rebuild; hours far enough back to be whole in every window are
given as hour counts alone.

A good call has the alert tests' phases (TTFT about 795 ms); a bad one is the same with 1.1 s more server wait
(TTFT about 1.9 s). With 99 %, a window's burn is its bad share over 1 %: 29 bad of 200 calls burn 14.5x."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from probes.alerts.evaluate import PassReport, run_pass
from probes.models import Measurement, Probe, Region, ServiceLevelObjective, Target
from probes.slos.rebuild import rebuild
from tests.alerts.conftest import PHASES
from tests.factories import (
    MeasurementFactory,
    ProbeFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    SLOHourCountFactory,
    TargetFactory,
)

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
SLOW_SERVER_WAIT = 1100.0


def at(minutes: float) -> datetime:
    """NOW plus (or minus) this many minutes."""
    return NOW + timedelta(minutes=minutes)


def hours_ago(hours: int) -> datetime:
    return NOW - hours * HOUR


@dataclass
class Scene:
    target: Target
    probe: Probe
    regions: list[Region]
    objective: ServiceLevelObjective

    def calls(self, region: Region, start: datetime, end: datetime, good: int, bad: int, *, seed: int = 1) -> None:
        """good + bad calls from `region`, their slots spread evenly over [start, end), the bad ones (1.1 s more
        server wait) among them every so often; counted once `count()` runs."""
        n = good + bad
        step = (end - start) / n
        bad_at = {round(i * n / bad) for i in range(bad)} if bad else set()
        rng = random.Random(seed)
        rows = []
        for i in range(n):
            grow = SLOW_SERVER_WAIT if i in bad_at else 0.0
            p = {name: ms * rng.uniform(0.98, 1.02) for name, ms in PHASES.items()}
            p["server_wait"] += grow
            ttfb = p["dns"] + p["connect"] + p["tls"] + p["server_wait"]
            ttft = ttfb + p["first_token"]
            rows.append(
                MeasurementFactory.build(
                    probe=self.probe,
                    region=region,
                    scheduled_for=start + i * step,
                    dns_ms=p["dns"],
                    connect_ms=p["connect"],
                    tls_ms=p["tls"],
                    ttfb_ms=ttfb,
                    ttft_ms=ttft,
                    ttfat_ms=ttft,
                    total_ms=ttft + p["streaming"],
                )
            )
        Measurement.objects.bulk_create(rows)

    def count(self) -> None:
        """Count the raw rows stored so far, by the objective's own rebuild (it starts the counts afresh)."""
        rebuild(self.objective.id)
        self.objective.refresh_from_db()

    def hours(self, region: Region, first: datetime, last: datetime, good: int, bad: int) -> None:
        """Hour counts alone (no raw rows) for each hour in [first, last): for hours whole in every window read."""
        hour = first
        while hour < last:
            SLOHourCountFactory(
                objective=self.objective,
                target=self.target,
                region=region,
                hour=hour,
                good=good,
                degraded=0,
                bad=bad,
                missed=0,
                excluded=0,
            )
            hour += HOUR

    def quiet_hours(self, region: Region, good: int = 800) -> None:
        """Hours 2 to 6 before NOW full of good calls: the 6-hour and 3-day burns stay below 1 whatever the last
        hour holds (up to 29 bad calls), so only the 1-hour alert can hold."""
        self.hours(region, hours_ago(6), hours_ago(1), good, 0)

    def run(self, minutes: float = 0) -> PassReport:
        return run_pass(at(minutes))


@pytest.fixture
def scene(db) -> Scene:
    cities = ["Lagos", "Nairobi", "Frankfurt"]
    regions = [RegionFactory(slug=f"test-{city.lower()}", name=f"{city} (test)", city=city) for city in cities]
    target = TargetFactory(name="gpt-eu")
    probe = ProbeFactory(target=target, regions=regions, interval_seconds=60)
    objective = ServiceLevelObjectiveFactory(
        name="chat 99", targets=[target], ttft_threshold_ms=1000.0, objective_percent=99.0, exclude_silences=False
    )
    return Scene(target=target, probe=probe, regions=regions, objective=objective)
