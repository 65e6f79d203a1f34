"""One region of three slows down and the rule needs two: however long it lasts, nothing opens."""

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_one_slow_region_when_two_are_needed_opens_no_incident(world):
    lagos, nairobi, frankfurt = world.regions
    world.baseline_week()
    world.calls(lagos, at(-35), at(0), seed=1, server_wait=1100.0)
    world.calls(nairobi, at(-35), at(0), seed=2)
    world.calls(frankfurt, at(-35), at(0), seed=3)
    rule = AlertRuleFactory(target=world.target, threshold_ms=None, baseline_factor=1.5, min_regions=2)

    reports = [run_pass(at(minute)) for minute in (-20, -10, 0)]

    assert [r.opened for r in reports] == [0, 0, 0]
    assert not Incident.objects.exists()
    assert not AlertState.objects.filter(rule=rule).exclude(status=AlertState.OK).exists()


def test_a_quorum_in_percent_counts_the_regions_measured(world):
    lagos, nairobi, frankfurt = world.regions
    world.baseline_week()
    world.calls(lagos, at(-25), at(0), seed=1, server_wait=1100.0)
    world.calls(nairobi, at(-25), at(0), seed=2, server_wait=1100.0)
    world.calls(frankfurt, at(-25), at(0), seed=3)
    # 2 of 3 measured is 67%: below a 70% quorum, so nothing; the same breach meets a 60% one.
    AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=1, min_regions_percent=70.0)
    run_pass(at(-10))
    assert run_pass(at(0)).opened == 0

    AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=1, min_regions_percent=60.0)
    run_pass(at(-10))
    assert run_pass(at(0)).opened == 1
