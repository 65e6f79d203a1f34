"""A message signed with a key this site never issued (or has deleted) is
refused whole with the key id it names."""

from __future__ import annotations

from probes.models import DeadLetter, Measurement, RegionKey
from probes.worker.protocol import Credential
from tests.factories import region_credential, sealed_results
from tests.trust.conftest import ingest


def test_a_message_signed_with_a_key_the_site_never_issued_is_refused(region, payloads):
    stranger, _text = Credential.new()
    region_credential(region)  # the region has a key: just not this one

    assert ingest(sealed_results(region, payloads(2), stranger)) == 0
    assert Measurement.objects.count() == 0
    letter = DeadLetter.objects.get()
    assert letter.reason == (
        f"key {stranger.key_id} is not a credential of this site (claimed region {region.slug}): "
        "a wrong or deleted credential"
    )
    assert letter.region_id == region.id


def test_a_deleted_key_is_unknown_from_then_on(region, payloads):
    credential = region_credential(region)
    assert ingest(sealed_results(region, payloads(1), credential)) == 1
    RegionKey.objects.filter(key_id=credential.key_id).delete()

    assert ingest(sealed_results(region, payloads(1, start=1), credential)) == 0
    assert f"key {credential.key_id} is not a credential of this site" in DeadLetter.objects.get().reason
