"""A region's status follows its workers as they run: live while a worker of the wheel beats, dark once
its last worker stops (its goodbye beat), live again when one starts; and a worker killed without a
goodbye leaves the region dark once the dark limit has passed since its last beat."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from probes import readings
from tests.support import wait_for

pytestmark = pytest.mark.timeout(300)


def test_a_region_turns_dark_when_its_workers_stop_and_live_again_when_one_starts(tls_fleet, make_region, credential):
    region = make_region(slug="test-quito", name="test-quito")
    text = credential(region)

    def status() -> str:
        return readings.region_status(timezone.now())[region.id]

    assert status() == "dark"  # no worker ever
    tls_fleet.start_ingest()  # it takes the heartbeats
    first = tls_fleet.start_worker(region.slug, text)
    wait_for(lambda: status() == "live", 60, message="the region to turn live")
    # Its starting beat makes the region live before Celery runs: stopped once it runs, as systemd would.
    wait_for(lambda: " ready." in first.log(), 60, message="the worker to be ready")
    assert first.stop() == 0
    wait_for(lambda: status() == "dark", 60, message="the region to turn dark after its worker stopped")

    second = tls_fleet.start_worker(region.slug, text)
    wait_for(lambda: status() == "live", 60, message="the region to turn live again")
    # Killed: no goodbye. Live until the heartbeats are missed long enough, dark after the dark limit.
    second.kill()
    last_seen = readings.region_health(timezone.now())[region.id].last_seen
    later = last_seen + timedelta(seconds=settings.LATENCY_REGION_DARK_AFTER + 1)
    assert readings.region_status(later)[region.id] == "dark"
    assert readings.region_status(last_seen + timedelta(seconds=1))[region.id] == "live"
