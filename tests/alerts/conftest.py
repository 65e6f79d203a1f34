"""A target measured from three regions, a week of calls as its baseline, and
a way to store the calls of a breach: the world every alert test judges.

Calls have fixed phases with a small seeded jitter (dns 5, connect 30, TLS
60, server wait 300, first token 400, streaming 1000 ms: TTFT about 795 ms),
so a test says which phase grows and by how much, and what the pass should
name follows from that alone."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Measurement, Probe, Region, Target
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory, TargetFactory

# A fixed moment (half past an hour, in the past), so a pass "as if at T" is repeatable.
T = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)
PHASES = {"dns": 5.0, "connect": 30.0, "tls": 60.0, "server_wait": 300.0, "first_token": 400.0, "streaming": 1000.0}


@dataclass
class World:
    target: Target
    probe: Probe
    regions: list[Region]

    def calls(
        self,
        region: Region,
        start: datetime,
        end: datetime,
        every: timedelta = timedelta(minutes=1),
        *,
        seed: int = 1,
        outcome: str = "ok",
        **grow: float,
    ) -> int:
        """Store one call every `every` in [start, end) from `region`, each
        phase as PHASES plus `grow` (e.g. server_wait=1100.0), jittered 2%."""
        rng = random.Random(seed)
        rows = []
        at = start
        while at < end:
            p = {name: (ms + grow.get(name, 0.0)) * rng.uniform(0.98, 1.02) for name, ms in PHASES.items()}
            ttfb = p["dns"] + p["connect"] + p["tls"] + p["server_wait"]
            ttft = ttfb + p["first_token"]
            ok = outcome == "ok"
            rows.append(
                MeasurementFactory.build(
                    probe=self.probe,
                    region=region,
                    scheduled_for=at,
                    outcome=outcome,
                    dns_ms=p["dns"] if ok else None,
                    connect_ms=p["connect"] if ok else None,
                    tls_ms=p["tls"] if ok else None,
                    ttfb_ms=ttfb if ok else None,
                    ttft_ms=ttft if ok else None,
                    ttfat_ms=ttft if ok else None,
                    total_ms=ttft + p["streaming"] if ok else None,
                    http_status=200 if ok else None,
                )
            )
            at += every
        Measurement.objects.bulk_create(rows)
        return len(rows)

    def baseline_week(self, until: datetime = T, every: timedelta = timedelta(minutes=10)) -> None:
        """Seven days of ordinary calls from every region, up to `until` (the baseline)."""
        for i, region in enumerate(self.regions):
            self.calls(region, until - timedelta(days=7), until - timedelta(hours=2), every, seed=100 + i)


@pytest.fixture
def world(db) -> World:
    # Regions of the test's own (the seeded ones have the real slugs): summaries name a region by its city.
    cities = ["Lagos", "Nairobi", "Frankfurt"]
    regions = [RegionFactory(slug=f"test-{city.lower()}", name=f"{city} (test)", city=city) for city in cities]
    target = TargetFactory(name="gpt-eu")
    probe = ProbeFactory(target=target, regions=regions, interval_seconds=60)
    return World(target=target, probe=probe, regions=regions)


def at(minutes: float) -> datetime:
    """T plus (or minus) this many minutes."""
    return T + timedelta(minutes=minutes)
