"""Only a central key the worker's credential holds makes an order
runnable: an order signed with a key made up by a forger, with the region's
own key (what a stolen region host holds), or a signed order whose body was
changed after signing is refused, counted and never run."""

from __future__ import annotations

import json

import pytest

from probes.fleet.central import signers
from probes.worker.protocol import ORDER, Credential, seal_central
from tests.factories import region_credential
from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)


def test_forged_wrong_key_and_tampered_orders_are_refused(orders):
    orders.start()
    forger, _text = Credential.new()
    made_up = orders.slot("made-up-key")
    orders.push(seal_central(ORDER, orders.region.slug, [forger], orders.content(made_up)))
    # A key the forger can name as the site's: the id of the central key, with a signature of their own.
    named = orders.slot("named-central-key")
    real_id = signers()[0].key_id
    forged = seal_central(ORDER, orders.region.slug, [forger], orders.content(named))
    forged["signatures"] = {real_id: forged["signatures"][forger.key_id]}
    orders.push(forged)
    # The region's own credential, as a stolen region host has it.
    region_key = orders.slot("region-key")
    orders.push(seal_central(ORDER, orders.region.slug, [region_credential(orders.region)], orders.content(region_key)))
    # A genuine order whose body was changed after signing: another request id, the same signature.
    tampered = orders.slot("tampered-original")
    order = seal_central(ORDER, orders.region.slug, signers(), orders.content(tampered))
    content = json.loads(order["body"])
    content["spec"]["headers"]["x-mock-request-id"] = "tampered"
    order["body"] = json.dumps(content)
    orders.push(order)
    genuine = orders.slot("genuine")
    orders.publish(genuine)

    wait_for(lambda: orders.measured(genuine), 90, message="the signed order behind them to be measured")
    for rid in ("made-up-key", "named-central-key", "region-key", "tampered-original", "tampered"):
        assert not orders.called(rid), rid
    wait_for(
        lambda: (row := orders.worker_row()) is not None and row.refused_orders == 4,
        60,
        message="the four refusals counted in a heartbeat",
    )
    lines = orders.refusal_lines()
    assert len(lines) == 2, lines  # two kinds: a key the credential does not hold, a bad signature
    assert any("which this worker's credential does not hold" in line for line in lines)
    assert any("bad central signature" in line for line in lines)
