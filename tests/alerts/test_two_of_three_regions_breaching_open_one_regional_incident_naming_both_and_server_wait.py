"""Lagos and Nairobi get slower at the provider (server wait +1.1 s), Frankfurt does not: after the condition has
held for a whole window, one regional incident opens, naming both regions and the server-side phase."""

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Incident, IncidentEvent
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_two_slow_regions_of_three_open_a_regional_incident_that_names_them_and_server_wait(world):
    lagos, nairobi, frankfurt = world.regions
    world.baseline_week()
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
    world.calls(frankfurt, at(-25), at(0), seed=9)
    rule = AlertRuleFactory(
        target=world.target, metric="ttft", percentile="p95", threshold_ms=None, baseline_factor=1.5, min_regions=2
    )

    first = run_pass(at(-10))
    assert first.opened == 0
    assert AlertState.objects.get(rule=rule).status == AlertState.PENDING
    assert not Incident.objects.exists()

    second = run_pass(at(0))

    assert second.opened == 1
    incident = Incident.objects.get()
    assert incident.scope == "regional"
    assert {r.slug for r in incident.regions.all()} == {"test-lagos", "test-nairobi"}
    assert incident.phase == "server_wait"
    assert incident.started_at == at(-10) and incident.opened_at == at(0)
    assert incident.measured_regions == 3
    assert 1700 < incident.peak_value < 2200 and 700 < incident.baseline_value < 900
    summary = incident.summary
    assert summary.startswith("TTFT p95 from Lagos and Nairobi to gpt-eu is 2.")
    assert "x its 7-day baseline at this hour" in summary
    assert "TCP connect unchanged, server wait +1.1 s: queueing at the provider, not the network" in summary
    assert summary.endswith("2 of 3 regions: regional.")
    assert list(IncidentEvent.objects.values_list("kind", flat=True)) == ["opened"]
