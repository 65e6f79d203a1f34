"""Fixtures of the tests of an incident's language: the alert tests' world (a target, three regions, a week of
baseline), with an incident opened in it by the evaluator as the site opens one, so its summary's data is the
evaluator's own; and loopback receivers allowed as the notification tests allow them."""

from __future__ import annotations

import pytest

from probes.alerts.evaluate import run_pass
from probes.models import Incident
from tests.alerts.conftest import at, world  # noqa: F401 (a fixture, used by name)
from tests.factories import AlertRuleFactory


@pytest.fixture(autouse=True)
def private_addresses_allowed(settings):
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = True


@pytest.fixture
def opened_incident(world):  # noqa: F811
    """`opened_incident(*channels)`: TCP connect grows from Lagos only (as
    tests/alerts/test_connect_growth_alone_is_named_the_network_path.py); the rule notifies the channels given."""

    def open_one(*channels) -> Incident:
        lagos, nairobi, frankfurt = world.regions
        world.baseline_week()
        world.calls(lagos, at(-25), at(0), seed=1, connect=600.0)
        world.calls(nairobi, at(-25), at(0), seed=2)
        world.calls(frankfurt, at(-25), at(0), seed=3)
        rule = AlertRuleFactory(
            name="TTFB over baseline",
            target=world.target,
            metric="ttfb",
            percentile="p90",
            threshold_ms=None,
            baseline_factor=1.5,
        )
        rule.channels.add(*channels)
        run_pass(at(-10))
        run_pass(at(0))
        return Incident.objects.get()

    return open_one
