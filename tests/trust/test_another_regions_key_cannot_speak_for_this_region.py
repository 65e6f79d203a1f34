"""A stolen Mumbai credential cannot forge Lagos rows: a message signed with
one region's key that claims another region is refused whole, kept as a
dead letter with the reason, and stores nothing."""

from __future__ import annotations

from probes.models import DeadLetter, Measurement
from tests.factories import RegionFactory, region_credential, sealed_results
from tests.trust.conftest import ingest


def test_a_message_signed_with_another_regions_key_claiming_this_region_is_a_dead_letter_and_stores_nothing(
    probe, region, payloads
):
    mumbai = RegionFactory(slug="test-mumbai")
    probe.regions.add(mumbai)
    mumbai_key = region_credential(mumbai)
    forged = sealed_results(region, payloads(3), mumbai_key, slug=region.slug)

    assert ingest(forged) == 0
    assert Measurement.objects.count() == 0
    letter = DeadLetter.objects.get()
    assert letter.payload == forged  # as it arrived
    assert letter.source == "ingest"
    assert letter.reason == (
        f"key {mumbai_key.key_id} belongs to region test-mumbai, not to {region.slug}: "
        "a region's credential speaks only for that region"
    )
    # Named as the message names itself: the region it claims and the worker it says sent it.
    assert letter.region_id == region.id and letter.worker == "worker-lagos-1"


def test_the_same_payloads_signed_with_the_regions_own_key_are_stored(probe, region, payloads):
    assert ingest(sealed_results(region, payloads(3))) == 3
    assert Measurement.objects.filter(region=region).count() == 3
    assert not DeadLetter.objects.exists()
