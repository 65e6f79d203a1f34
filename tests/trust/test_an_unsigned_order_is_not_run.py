"""A run order the central site did not sign is never run, however well
formed: anyone holding the broker password (on Redis, every region host)
can push one with a plain Celery client, and it would make the worker send
the provider's key wherever the order says. The worker refuses it, logs the
first refusal once (a flood is one line) and counts each in its heartbeat,
and goes on running the signed orders behind it."""

from __future__ import annotations

import pytest

from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)


def test_unsigned_orders_are_refused_counted_and_logged_once(orders):
    orders.start()
    unsigned = [orders.slot(f"unsigned-{k}") for k in range(20)]
    for slot in unsigned:
        # Exactly what the scheduler's order said before orders were signed: the slot's message.
        orders.push(orders.content(slot))
    genuine = orders.slot("genuine")
    orders.publish(genuine)  # behind them on the same queue

    wait_for(lambda: orders.measured(genuine), 90, message="the signed order behind them to be measured")
    assert orders.called("genuine")
    assert not any(orders.called(f"unsigned-{k}") for k in range(20))
    wait_for(
        lambda: (row := orders.worker_row()) is not None and row.refused_orders == 20,
        60,
        message="the refusals counted in a heartbeat",
    )
    row = orders.worker_row()
    assert "it carries no central signature" in row.last_refusal and row.refused_replies == 0
    (line,) = orders.refusal_lines()
    assert "probes.test-orders-fra" in line and "no central signature" in line
    assert orders.worker.popen.poll() is None
