"""A correctly signed order runs only from its own region's queue. Pushed
onto another region's queue (a Tokyo order copied onto Frankfurt's queue),
it is refused, even by a worker serving both regions: run there, it would be
a Tokyo measurement taken from Frankfurt. A worker does not run an order for
a region it does not serve either."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.scheduling import signed_order
from probes.worker.protocol import region_queue
from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)


def test_a_signed_order_on_another_regions_queue_is_refused(orders, make_region):
    tokyo = make_region(slug="test-orders-tyo", name="test-orders-tyo")
    elsewhere = make_region(slug="test-orders-syd", name="test-orders-syd")
    orders.probe.regions.add(tokyo, elsewhere)
    orders.start(slug=f"{orders.region.slug},{tokyo.slug}")
    frankfurt_queue = region_queue(orders.region.slug)

    moved = orders.slot("tokyo-on-frankfurt", region=tokyo)
    later = datetime.now(UTC) + timedelta(minutes=5)
    orders.push(signed_order(moved, later), frankfurt_queue)
    not_served = orders.slot("sydney-on-frankfurt", region=elsewhere)
    orders.push(signed_order(not_served, later), frankfurt_queue)
    genuine = [orders.slot("genuine-fra"), orders.slot("genuine-tyo", region=tokyo)]
    for slot in genuine:
        orders.publish(slot)

    wait_for(lambda: all(orders.measured(slot) for slot in genuine), 90, message="the orders on their own queues")
    assert not orders.called("tokyo-on-frankfurt") and not orders.called("sydney-on-frankfurt")
    wait_for(
        lambda: (row := orders.worker_row()) is not None and row.refused_orders == 2,
        60,
        message="both refusals counted in Frankfurt's heartbeat",
    )
    lines = orders.refusal_lines()
    assert any("not on its own queue" in line and "test-orders-tyo" in line for line in lines), lines
    assert any("region test-orders-syd arrived on probes.test-orders-fra" in line for line in lines), lines
