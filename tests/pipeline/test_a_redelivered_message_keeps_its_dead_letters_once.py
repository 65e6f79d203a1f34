"""A message delivered again (the broker hands it out once more when a worker was killed after storing it but
before acknowledging it) records its dead letters once: each is keyed by the message (its task id, or a digest
of it when it has none) and the payload's place in it. Before, the redelivery of 8,403 messages left 10,103
letters."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import ingest_messages
from probes.models import DeadLetter, Measurement
from tests.factories import measurement_payload, sealed_results
from tests.support import wait_for

pytestmark = pytest.mark.timeout(120)


def _messages(probe, region, other, when):
    good = measurement_payload(probe, region, when)
    unknown_outcome = measurement_payload(probe, region, when + timedelta(minutes=1), outcome="nonsense")
    foreign = measurement_payload(probe, other, when + timedelta(minutes=2))  # not the signing key's region
    mixed = sealed_results(region, [good, unknown_outcome, foreign])
    forged = sealed_results(region, [measurement_payload(probe, region, when)], slug=other.slug)  # refused whole
    return mixed, forged


def _reasons() -> Counter:
    return Counter(
        ("region" if "signing key" in r else "outcome" if "outcome" in r else "whole")
        for r in DeadLetter.objects.values_list("reason", flat=True)
    )


def test_the_same_task_message_delivered_again_to_the_ingest_worker_keeps_its_letters_once(
    pipeline, make_probe, make_region
):
    other = make_region()
    probe = make_probe(interval_seconds=60, timeout_seconds=5)
    region = probe.regions.get()
    probe.regions.add(other)
    when = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30)
    mixed, forged = _messages(probe, region, other, when)
    pipeline.start_ingest()
    broker = pipeline.redis

    def drained() -> bool:
        return broker.llen("ingest") == 0 and broker.hlen("unacked") == 0

    def send(message, task_id: str) -> None:
        pipeline.app.send_task("probes.ingest", args=[message], queue="ingest", task_id=task_id)

    # Delivered twice in one batch, as a prefetched message and its redelivery can be.
    for _ in range(2):
        send(mixed, "0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0001")
        send(forged, "0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0002")
    wait_for(lambda: DeadLetter.objects.count() >= 3 and drained(), 60, message="the first deliveries")
    assert _reasons() == {"outcome": 1, "region": 1, "whole": 1}

    # Delivered again after both were stored and acknowledged; then a message of its own, stored after them.
    send(mixed, "0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0001")
    send(forged, "0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0002")
    later = when + timedelta(minutes=10)
    send(sealed_results(region, [measurement_payload(probe, region, later)]), "0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0003")
    wait_for(
        lambda: Measurement.objects.filter(scheduled_for=later).exists() and drained(), 60, message="the redeliveries"
    )
    assert _reasons() == {"outcome": 1, "region": 1, "whole": 1}
    assert sorted(Measurement.objects.values_list("scheduled_for", flat=True)) == [when, later]
    keys = set(DeadLetter.objects.values_list("message_id", "payload_index"))
    assert keys == {
        ("0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0001", 1),
        ("0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0001", 2),
        ("0b0c3e0e-1a8c-4c54-9d55-5d2c0f1e0002", None),
    }


@pytest.mark.django_db(transaction=True)
def test_a_message_without_a_task_id_is_known_by_its_digest(make_probe, make_region):
    other = make_region()
    probe = make_probe(interval_seconds=60, timeout_seconds=5)
    region = probe.regions.get()
    probe.regions.add(other)
    when = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30)
    mixed, forged = _messages(probe, region, other, when)
    for _ in range(2):
        ingest_messages([((mixed,), {}, "ingest"), ((forged,), {}, "ingest")])
    assert _reasons() == {"outcome": 1, "region": 1, "whole": 1}
    # Another message with the same bad payload is another message: its letter is kept too.
    again = sealed_results(
        region, [measurement_payload(probe, region, when + timedelta(minutes=1), outcome="nonsense")]
    )
    ingest_messages([((again,), {}, "ingest")])
    assert _reasons() == {"outcome": 2, "region": 1, "whole": 1}
