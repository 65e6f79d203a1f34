"""Anything on the ingest queue that is not a sealed results message (text,
a dict of the wrong shape, a heartbeat, a signed body that is not a list,
the wrong number of arguments) is a dead letter with its reason, and the
good message beside it is stored."""

from __future__ import annotations

from probes.ingest import ingest_messages
from probes.models import DeadLetter, Measurement
from probes.worker.protocol import HEARTBEAT, seal
from tests.factories import region_credential, sealed_results


def test_each_kind_of_non_message_is_refused_with_its_reason_and_the_good_one_is_stored(region, payloads):
    credential = region_credential(region)
    good = sealed_results(region, payloads(2), credential)
    heartbeat = seal(HEARTBEAT, region.slug, credential, {"instance": "0" * 32})
    not_a_list = seal("results", region.slug, credential, {"probe_id": 1})
    no_signature = {k: v for k, v in good.items() if k != "signature"}
    stored = ingest_messages(
        [
            (("garbage",), {}, "t1"),
            ((heartbeat,), {}, "t2"),
            ((not_a_list,), {}, "t3"),
            ((no_signature,), {}, "t4"),
            ((good, good), {}, "t5"),
            ((good,), {}, "t6"),
        ]
    )
    assert stored == 2 and Measurement.objects.count() == 2
    reasons = sorted(DeadLetter.objects.values_list("reason", flat=True))
    assert reasons == sorted(
        [
            "not a signed message (a str)",
            "a heartbeat message on the ingest queue, which takes results only",
            "the signed results body is not a list of measurements (a dict)",
            "the message has no body or no signature",
            "task message t5: expected one argument, a sealed results message",
        ]
    )
    assert DeadLetter.objects.get(reason__startswith="the signed results body").region_id == region.id
