"""Beacons naming one target count against LATENCY_BEACONS_PER_TARGET_PER_MINUTE, whatever address they come from:
over it the answer is 429 with Retry-After and nothing is stored, while beacons naming another target, or none,
are still taken (beacons naming no target we know share one budget, so inventing names gains nothing)."""

from __future__ import annotations

import pytest

from probes.models import Observation
from tests.factories import TargetFactory
from tests.realusers_beacon.conftest import APP

pytestmark = pytest.mark.django_db


def test_the_fourth_beacon_for_a_target_is_refused_from_any_address(app_source, send_beacon, settings):
    settings.LATENCY_BEACONS_PER_TARGET_PER_MINUTE = 3
    settings.LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE = 1
    TargetFactory(name="Chat prod")
    TargetFactory(name="Search prod")

    def beacon(n: int, **fields):
        return send_beacon(app_source.browser_key, remote_addr=f"198.51.100.{n}", **fields)

    # A minute's edge crossed on the way gives the target a second budget once at most: a refusal within eight.
    answers = []
    while 429 not in [r.status_code for r in answers] and len(answers) < 8:
        answers.append(beacon(len(answers) + 1, target="Chat prod"))
    refused = answers[-1]
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused["Access-Control-Allow-Origin"] == APP
    stored = [r for r in answers if r.status_code == 204]
    assert len(stored) in (3, 6)
    assert Observation.objects.filter(target__name="Chat prod").count() == len(stored)

    assert beacon(50, target="Search prod").status_code == 204
    assert beacon(51).status_code == 204
    assert beacon(52, target="Nonesuch").status_code == 204
