"""Rotating a region's credential with no overlap (`manage.py region_key SLUG --overlap 0`) while its worker
runs: what the worker signs from then on is kept in the dead-letter table with a reason naming the retired
key, no row of it is stored, and the worker, told so in a heartbeat reply, stops with exit code 78 and one
line saying why."""

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import DeadLetter, Measurement
from probes.worker.protocol import Credential
from tests.regions_e2e.conftest import manage
from tests.support import wait_for

pytestmark = pytest.mark.timeout(300)


def test_a_rotated_credential_sends_results_to_dead_letters_and_stops_the_worker(tls_fleet, llm_probe, credential):
    probe = llm_probe(slug="test-kano", interval=10)
    region = probe.regions.get()
    text = credential(region)
    old_key = Credential.parse(text).key_id
    tls_fleet.start_ingest()
    # Heartbeats slower than the probe's interval: a result signed with the retired key reaches the ingest
    # before a heartbeat reply tells the worker to stop.
    worker = tls_fleet.start_worker(region.slug, text, LATENCY_HEARTBEAT_SECONDS="25")
    tls_fleet.start_scheduler()
    wait_for(lambda: Measurement.objects.filter(region=region).exists(), 120, message="a first measurement")

    done = manage("region_key", region.slug, "--overlap", "0", env=tls_fleet.pipeline.env())
    assert done.returncode == 0, done.stdout + done.stderr
    rotated_at = datetime.now(UTC)
    new_key = next(line for line in done.stdout.split() if line.startswith("la2_"))
    assert Credential.parse(new_key).key_id != old_key

    letter = wait_for(
        lambda: DeadLetter.objects.filter(reason__contains=old_key, received_at__gte=rotated_at).first(),
        90,
        message="a dead letter naming the retired key",
    )
    assert "retire" in letter.reason.lower(), letter.reason
    wait_for(lambda: worker.popen.poll() is not None, 90, message="the worker to stop")
    assert worker.popen.returncode == 78
    said = [line for line in worker.log().splitlines() if old_key in line and "retire" in line.lower()]
    assert said, worker.log()
    # Nothing signed with the retired key was stored after the rotation (a second for a batch whose key was
    # checked just before it).
    assert not Measurement.objects.filter(region=region, ingested_at__gt=rotated_at + timedelta(seconds=1)).exists()
    assert text not in worker.log() and new_key not in worker.log()
