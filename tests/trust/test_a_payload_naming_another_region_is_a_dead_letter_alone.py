"""Inside a correctly signed message, every payload must name the signing
key's region: one that names another region is a dead letter on its own,
and its neighbours are stored."""

from __future__ import annotations

from probes.models import DeadLetter, Measurement
from tests.factories import RegionFactory, sealed_results
from tests.trust.conftest import ingest


def test_a_payload_naming_another_region_is_a_dead_letter_while_its_neighbours_are_stored(probe, region, payloads):
    mumbai = RegionFactory(slug="test-mumbai")
    probe.regions.add(mumbai)
    smuggled = payloads(1, start=10, of_region=region)[0]  # a Lagos row...
    batch = [*payloads(2, of_region=mumbai), smuggled, *payloads(2, start=2, of_region=mumbai)]
    message = sealed_results(mumbai, batch)  # ...in a message Mumbai's key signs for Mumbai

    assert ingest(message) == 4
    assert Measurement.objects.filter(region=mumbai).count() == 4
    assert not Measurement.objects.filter(region=region).exists()
    letter = DeadLetter.objects.get()
    assert letter.payload == smuggled
    assert letter.reason == f"region {region.id} is not the region of the signing key (test-mumbai)"
    assert (letter.probe_id, letter.region_id, letter.worker) == (probe.id, region.id, "worker-lagos-1")
