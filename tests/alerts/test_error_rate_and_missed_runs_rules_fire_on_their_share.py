"""Rules on shares: the error rate (calls not ok) and missed runs (scheduled runs nobody picked up) of a region
over the window, against a threshold in percent."""

from datetime import timedelta

from probes.alerts.evaluate import run_pass
from probes.models import Incident, MissedRun
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_an_error_rate_above_its_threshold_opens_an_incident_that_quotes_the_share(world):
    lagos, nairobi, _ = world.regions
    # Every other minute a timeout in Lagos: 50% of calls.
    world.calls(lagos, at(-25), at(0), timedelta(minutes=2), seed=1)
    world.calls(lagos, at(-24), at(0), timedelta(minutes=2), seed=2, outcome="timeout")
    world.calls(nairobi, at(-25), at(0), seed=3)
    AlertRuleFactory(target=world.target, metric="error_rate", percentile="", threshold_ms=None, threshold_percent=20.0)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert [r.slug for r in incident.regions.all()] == ["test-lagos"]
    assert incident.summary.startswith("Error rate from Lagos to gpt-eu is 50% of calls, above the 20% threshold")
    assert incident.peak_value == 50.0 and incident.phase == ""


def test_missed_runs_of_a_dark_region_fire_a_missed_rule(world):
    lagos, nairobi, _ = world.regions
    world.calls(nairobi, at(-25), at(0), seed=3)
    MissedRun.objects.bulk_create(
        MissedRun(probe=world.probe, target=world.target, region=lagos, scheduled_for=at(-25 + m), recorded_at=at(0))
        for m in range(25)
    )
    AlertRuleFactory(target=world.target, metric="missed", percentile="", threshold_ms=None, threshold_percent=50.0)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert [r.slug for r in incident.regions.all()] == ["test-lagos"]
    assert "Missed runs from Lagos to gpt-eu are 100% of scheduled runs" in incident.summary
    assert incident.summary.endswith("1 of 2 regions: regional.")
