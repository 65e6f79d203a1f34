"""A second probe of the target runs every 20 minutes, and its first call after that idle spell is slow (the
provider scaled the model down); the every-minute probe is fine. The p99 breach is the idle calls' alone, so the
incident names a cold start rather than a phase."""

from datetime import timedelta

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import World, at
from tests.factories import AlertRuleFactory, ProbeFactory


def test_a_breach_made_of_first_calls_after_idle_is_a_cold_start(world):
    lagos = world.regions[0]
    world.baseline_week()
    world.calls(lagos, at(-70), at(0), seed=1)
    idle_probe = ProbeFactory(target=world.target, regions=[lagos], interval_seconds=1200)
    World(world.target, idle_probe, [lagos]).calls(
        lagos, at(-60), at(0), timedelta(minutes=20), seed=2, first_token=3000.0
    )
    AlertRuleFactory(
        target=world.target, percentile="p99", threshold_ms=1500.0, window_minutes=30, min_samples=10, regions=[lagos]
    )

    run_pass(at(-30))
    assert run_pass(at(0)).opened == 1

    incident = Incident.objects.get()
    assert incident.phase == "cold_start"
    assert "slow only on the first call after 20 min idle: a cold start, not a trend" in incident.summary


def test_the_same_slowness_on_every_call_is_not_a_cold_start(world):
    lagos = world.regions[0]
    world.baseline_week()
    world.calls(lagos, at(-70), at(0), seed=1, first_token=3000.0)
    AlertRuleFactory(
        target=world.target, percentile="p99", threshold_ms=1500.0, window_minutes=30, min_samples=10, regions=[lagos]
    )

    run_pass(at(-30))
    run_pass(at(0))

    assert Incident.objects.get().phase == "first_token"
