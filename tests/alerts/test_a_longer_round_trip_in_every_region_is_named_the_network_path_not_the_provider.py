"""The finding of issue 45: TCP connect grew from about 40 to 400 ms in every region, TLS and the request's
round trip with it, so server wait (which holds one round trip) grew by about what connect grew. The provider
added nothing: the incident names the network path, and not queueing at the provider."""

import re

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory

ROUND_TRIP_GROWTH = 360.0  # connect 30 -> 390 ms in the world's calls (40 -> 400 in the finding)


def test_server_wait_growing_with_connect_everywhere_names_the_network_path(world):
    world.baseline_week()
    for i, region in enumerate(world.regions):
        world.calls(
            region,
            at(-25),
            at(0),
            seed=i,
            connect=ROUND_TRIP_GROWTH,
            tls=ROUND_TRIP_GROWTH,
            server_wait=ROUND_TRIP_GROWTH + 7.0,  # the finding's "+367 ms"
        )
    AlertRuleFactory(target=world.target, metric="ttfb", percentile="p90", threshold_ms=None, baseline_factor=1.5)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert incident.scope == "global"
    assert incident.phase in ("connect", "tls")
    summary = incident.summary
    assert "queueing at the provider" not in summary
    assert "the network path, not the provider" in summary
    assert "TCP connect +3" in summary
    assert "and server wait +3" in summary and "with it (one round trip)" in summary


def test_server_wait_growing_well_beyond_connect_still_names_the_provider_with_its_own_share(world):
    world.baseline_week()
    for i, region in enumerate(world.regions):
        world.calls(region, at(-25), at(0), seed=i, connect=100.0, server_wait=1200.0)
    AlertRuleFactory(target=world.target, metric="ttfb", percentile="p90", threshold_ms=None, baseline_factor=1.5)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert incident.phase == "server_wait"
    # One round trip (+100 ms) of the +1.3 s is the path's; the provider's own share is about +1.1 s.
    assert re.search(
        r"TCP connect \+\d+ ms, server wait \+1\.\d s \(\+1\.1 s beyond the round trip\): queueing at the provider",
        incident.summary,
    ), incident.summary
