"""The storage part again over RabbitMQ: the wheel's worker, connected as its region's own RabbitMQ user
(which may read only its region's queues and publish only results and heartbeats), runs the region's
slots and its signed results are stored; the central side uses a user of its own."""

import pytest

from probes.models import Measurement, Worker
from probes.worker.protocol import Credential
from tests.support import wait_for

pytestmark = pytest.mark.timeout(300)


def test_a_wheel_installed_worker_over_rabbitmq_stores_signed_measurements(rabbit_fleet, llm_probe, credential):
    probe = llm_probe(slug="test-lusaka", interval=10)
    region = probe.regions.get()
    text = credential(region)
    rabbit_fleet.start_ingest()
    worker = rabbit_fleet.start_worker(region.slug, text, guard=True)
    rabbit_fleet.start_scheduler()

    wait_for(lambda: Measurement.objects.filter(region=region).count() >= 2, 120, message="two measurements")
    seen = wait_for(lambda: Worker.objects.filter(region=region).first(), 60, message="the worker's heartbeat")
    assert seen.key_id == Credential.parse(text).key_id
    assert set(Measurement.objects.filter(region=region).values_list("worker", flat=True)) == {seen.name}
    assert {row.outcome for row in Measurement.objects.filter(region=region)} == {"ok"}
    assert worker.popen.poll() is None
    assert rabbit_fleet.host.imported_django() == []
    # The worker never needed more than its user may do: no access refusal in its log.
    assert "ACCESS_REFUSED" not in worker.log()
