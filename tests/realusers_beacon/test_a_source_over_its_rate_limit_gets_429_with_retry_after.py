"""Over LATENCY_BEACONS_PER_MINUTE beacons of a source in a minute the answer is 429 with Retry-After (seconds to
the minute's end) and the beacon is not stored; another source is not held back."""

from __future__ import annotations

import pytest

from probes.models import Observation
from tests.factories import IngestSourceFactory
from tests.realusers_beacon.conftest import APP

pytestmark = pytest.mark.django_db


def test_the_beacon_over_the_limit_is_refused(app_source, send_beacon, settings):
    settings.LATENCY_BEACONS_PER_MINUTE = 2
    # Two allowed a minute; a minute's edge crossed on the way restarts the count once at most, so a refusal
    # comes within six.
    answers = []
    while 429 not in [r.status_code for r in answers] and len(answers) < 6:
        answers.append(send_beacon(app_source.browser_key))

    refused = answers[-1]
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused["Access-Control-Allow-Origin"] == APP
    stored = [r for r in answers if r.status_code == 204]
    assert len(stored) >= 2
    assert Observation.objects.filter(source=app_source).count() == len(stored)

    other = IngestSourceFactory(allowed_origins=[APP])
    assert send_beacon(other.browser_key).status_code == 204
