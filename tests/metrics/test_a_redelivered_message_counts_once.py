"""The measurements counter counts the rows ingest stored: a message delivered twice (a worker's retry, the
broker's redelivery) stores its slot once and counts once, through the real ingest path (sealed message,
signature, insert-or-ignore)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import ingest_messages
from tests.factories import measurement_payload, sealed_results
from tests.metrics.conftest import families, samples


@pytest.mark.django_db(transaction=True)
def test_a_message_delivered_twice_counts_once(make_probe, scrape_client, metrics_token):
    probe = make_probe()
    region = probe.regions.get()
    when = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=3)
    message = sealed_results(
        region,
        [measurement_payload(probe, region, when), measurement_payload(probe, region, when + timedelta(minutes=1))],
    )
    assert ingest_messages([((message,), {}, "ingest")]) == 2
    assert ingest_messages([((message,), {}, "ingest")]) == 0  # the redelivery: nothing new

    parsed = families(scrape_client(token=metrics_token).content.decode())
    labels = {"target": probe.target.name, "region": region.slug, "outcome": "ok"}
    assert samples(parsed, "latency_atlas_measurements_total") == [(labels, 2.0)]
    assert samples(parsed, "latency_atlas_ttft_seconds_count") == [
        ({"target": probe.target.name, "region": region.slug}, 2.0)
    ]


@pytest.mark.django_db(transaction=True)
def test_a_slot_repeated_within_one_batch_counts_once(make_probe, scrape_client, metrics_token):
    from probes.ingest import store

    probe = make_probe()
    region = probe.regions.get()
    when = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=3)
    first = measurement_payload(probe, region, when)
    again = measurement_payload(probe, region, when, outcome="timeout", ttft_ms=None)
    assert len(store([first, again])) == 1
    parsed = families(scrape_client(token=metrics_token).content.decode())
    counted = {s["outcome"]: v for s, v in samples(parsed, "latency_atlas_measurements_total")}
    assert counted == {"ok": 1.0}
