"""Two workers of the wheel for one region share its queue: the rows carry both workers' names, and every
slot still yields exactly one row."""

from collections import Counter

import pytest

from probes.models import Measurement, Worker
from tests.support import wait_for

pytestmark = pytest.mark.timeout(300)


def test_two_workers_of_one_region_both_run_its_slots_once_each(
    tls_fleet, make_region, make_target, make_probe, mockllm, credential
):
    region = make_region(slug="test-mumbai", name="test-mumbai")
    # Slow enough calls (0.5 s) that one worker is busy when the next slot is due.
    target = make_target(
        url=f"{mockllm.base_url}/v1/chat/completions?tokens=5&gap_ms=100", api_style="openai", model="mock-model"
    )
    for _ in range(6):
        make_probe(target=target, regions=[region], interval_seconds=10, timeout_seconds=5.0)
    text = credential(region)
    tls_fleet.start_ingest()
    first = tls_fleet.start_worker(region.slug, text)
    second = tls_fleet.start_worker(region.slug, text)
    tls_fleet.start_scheduler()

    def both_names():
        names = set(Worker.objects.filter(region=region).values_list("name", flat=True))
        return names if len(names) == 2 else None

    names = wait_for(both_names, 60, message="both workers' heartbeats")
    wait_for(
        lambda: set(Measurement.objects.filter(region=region).values_list("worker", flat=True)) == names,
        150,
        message="rows from both workers",
    )
    assert first.popen.poll() is None and second.popen.poll() is None
    slots = Counter(Measurement.objects.filter(region=region).values_list("probe_id", "scheduled_for"))
    assert [slot for slot, n in slots.items() if n > 1] == []
