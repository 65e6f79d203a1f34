"""A sealed message changed on the way (its body, its signature) does not
open: refused whole as a bad signature, nothing of it stored."""

from __future__ import annotations

import pytest

from probes.models import DeadLetter, Measurement
from tests.factories import region_credential, sealed_results
from tests.trust.conftest import ingest


def _faster(message: dict) -> dict:
    # What a forger wants: better numbers under the region's name.
    return {**message, "body": message["body"].replace('"ttft_ms":250.123456', '"ttft_ms":1.0')}


def _resigned(message: dict) -> dict:
    sig = message["signature"]
    return {**message, "signature": ("A" if sig[0] != "A" else "B") + sig[1:]}


@pytest.mark.parametrize("tamper", [_faster, _resigned], ids=["body", "signature"])
def test_a_tampered_message_is_refused_as_a_bad_signature_and_stores_nothing(region, payloads, tamper):
    credential = region_credential(region)
    honest = sealed_results(region, payloads(3), credential)
    tampered = tamper(honest)
    assert tampered != honest

    assert ingest(tampered) == 0
    assert Measurement.objects.count() == 0
    letter = DeadLetter.objects.get()
    assert letter.reason == f"bad signature for region {region.slug} (key {credential.key_id})"
    assert letter.payload == tampered and letter.region_id == region.id

    assert ingest(honest) == 3  # the message as signed still opens
