"""Only TCP connect grew (a longer route, a congested path): the incident names connect and the network, and
says server wait did not move."""

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_connect_only_growth_names_the_network_path(world):
    lagos, nairobi, frankfurt = world.regions
    world.baseline_week()
    world.calls(lagos, at(-25), at(0), seed=1, connect=600.0)
    world.calls(nairobi, at(-25), at(0), seed=2)
    world.calls(frankfurt, at(-25), at(0), seed=3)
    AlertRuleFactory(target=world.target, metric="ttfb", percentile="p90", threshold_ms=None, baseline_factor=1.5)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert incident.phase == "connect"
    assert [r.slug for r in incident.regions.all()] == ["test-lagos"]
    assert "server wait unchanged, TCP connect +600 ms: the network path, not the provider" in incident.summary
    assert incident.summary.startswith("TTFB p90 from Lagos to gpt-eu is ")
    assert incident.summary.endswith("1 of 3 regions: regional.")
