"""When every measured region breaches, the incident is global, and says so."""

import re

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_three_slow_regions_of_three_open_a_global_incident(world):
    world.baseline_week()
    for i, region in enumerate(world.regions):
        world.calls(region, at(-25), at(0), seed=i, first_token=900.0)
    AlertRuleFactory(target=world.target, threshold_ms=1200.0, min_regions=2)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert incident.scope == "global"
    assert incident.regions.count() == 3
    assert incident.phase == "first_token"
    assert ", above the 1.2 s threshold, for 10 min;" in incident.summary
    assert re.search(
        r"TCP connect unchanged, first token \+(8[89]\d|9[01]\d) ms: prefill or queueing", incident.summary
    )
    assert incident.summary.endswith("3 of 3 regions: global.")
