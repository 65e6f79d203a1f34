"""An incident's summary says what breaches now: when a third region joins a regional incident it names all three
and the global scope, and when one leaves it names those left; the timeline keeps who joined and left."""

from probes.alerts.evaluate import run_pass
from probes.models import Incident, IncidentEvent
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_the_summary_names_the_regions_breaching_now(world):
    lagos, nairobi, frankfurt = world.regions
    world.baseline_week()
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(40), seed=i, server_wait=1100.0)
    world.calls(frankfurt, at(-25), at(5), seed=9)
    # Frankfurt slows down too from 5 min past the opening, then recovers from 25 min on.
    world.calls(frankfurt, at(5), at(25), seed=10, server_wait=1100.0)
    world.calls(frankfurt, at(25), at(40), seed=11)
    AlertRuleFactory(
        target=world.target, metric="ttft", percentile="p95", threshold_ms=None, baseline_factor=1.5, min_regions=2
    )
    run_pass(at(-10))
    run_pass(at(0))
    opened = Incident.objects.get().summary
    assert opened.startswith("TTFT p95 from Lagos and Nairobi to gpt-eu")
    assert opened.endswith("2 of 3 regions: regional.")

    run_pass(at(20))
    joined = Incident.objects.get()
    assert joined.summary.startswith("TTFT p95 from Frankfurt, Lagos and Nairobi to gpt-eu")
    assert joined.summary.endswith("3 of 3 regions: global.")
    assert joined.scope == "global"

    run_pass(at(40))
    left = Incident.objects.get()
    assert left.summary.startswith("TTFT p95 from Lagos and Nairobi to gpt-eu")
    assert left.summary.endswith("2 of 3 regions: regional.")
    # The incident keeps every region it held, and its widest scope; the timeline says who came and went.
    assert {r.city for r in left.regions.all()} == {"Lagos", "Nairobi", "Frankfurt"}
    assert left.scope == "global"
    assert list(IncidentEvent.objects.order_by("at", "id").values_list("kind", "detail")) == [
        ("opened", opened),
        ("region_joined", "Frankfurt"),
        ("region_left", "Frankfurt"),
    ]
