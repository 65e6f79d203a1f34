"""A rule on rate_limited judges the share of a region's calls in the window the provider refused for capacity
(outcome rate_limited, HTTP 429, or overloaded): it fires on a region whose calls are mostly 429s, not on one
whose calls fail otherwise (http_error), names no phase, and its summary names the rate-limited share. A refused
call is still a failed call: an error_rate rule counts 429s as errors."""

from datetime import timedelta

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def share_rule(metric: str, percent: float):
    return AlertRuleFactory(
        target=None, metric=metric, percentile="", threshold_ms=None, threshold_percent=percent, min_samples=5
    )


def test_a_rate_limited_rule_fires_where_calls_are_mostly_429s_and_not_where_they_fail_otherwise(world):
    lagos, nairobi, frankfurt = world.regions
    # Four calls every five minutes from Lagos and from Nairobi, in every 10-minute window two of each. Lagos: three
    # of the four refused (75%). Nairobi: as many failures, none of them a refusal.
    every = timedelta(minutes=5)
    for region, failure in ((lagos, "rate_limited"), (nairobi, "http_error")):
        world.calls(region, at(-25), at(0), every, seed=1)
        world.calls(region, at(-24), at(0), every, seed=2, outcome=failure)
        world.calls(region, at(-23), at(0), every, seed=3, outcome=failure)
        world.calls(
            region, at(-22), at(0), every, seed=4, outcome="overloaded" if failure == "rate_limited" else failure
        )
    world.calls(frankfurt, at(-25), at(0), seed=7)
    share_rule("rate_limited", 50.0)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert incident.rule.metric == "rate_limited"
    assert [r.slug for r in incident.regions.all()] == ["test-lagos"]
    assert incident.peak_value == 75.0 and incident.phase == ""
    assert incident.summary.startswith(
        "Rate-limited share from Lagos to gpt-eu is 75% of calls (refused for rate limits or overload), above the "
        "50% threshold, for 10 min."
    )
    assert incident.summary.endswith("1 of 3 regions: regional.")


def test_an_error_rate_rule_counts_rate_limited_calls_as_errors(world):
    lagos, nairobi, _ = world.regions
    # Lagos: every other call a 429, and nothing else failing.
    world.calls(lagos, at(-25), at(0), timedelta(minutes=2), seed=1)
    world.calls(lagos, at(-24), at(0), timedelta(minutes=2), seed=2, outcome="rate_limited")
    world.calls(nairobi, at(-25), at(0), seed=3)
    share_rule("error_rate", 20.0)

    run_pass(at(-10))
    run_pass(at(0))

    incident = Incident.objects.get()
    assert [r.slug for r in incident.regions.all()] == ["test-lagos"]
    assert incident.summary.startswith("Error rate from Lagos to gpt-eu is 50% of calls, above the 20% threshold")
