"""A signed order copied off the broker cannot be run later: the expiry is
inside what the central key signs, and a worker refuses an order past it
even when the copy carries no broker-level expiry at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.scheduling import signed_order
from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)


def test_an_expired_signed_order_is_refused(orders):
    orders.start()
    replayed = orders.slot("replayed", when=datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5))
    # Signed by the central site for this region and slot, and expired a moment ago.
    orders.push(signed_order(replayed, datetime.now(UTC) - timedelta(seconds=1)))
    genuine = orders.slot("genuine")
    orders.publish(genuine)

    wait_for(lambda: orders.measured(genuine), 90, message="the signed order behind it to be measured")
    assert not orders.called("replayed") and not orders.measured(replayed)
    wait_for(
        lambda: (row := orders.worker_row()) is not None and row.refused_orders == 1,
        60,
        message="the refusal counted in a heartbeat",
    )
    (line,) = orders.refusal_lines()
    assert "expired at" in line and "a replayed order" in line
