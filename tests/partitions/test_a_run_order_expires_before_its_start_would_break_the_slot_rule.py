"""A run order expires before a run it starts could break the slot rule (probes.slot_time.SLOT_LATE): a long
interval's order, or one waiting behind a busy region, becomes a missed run rather than a refused measurement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.scheduling import Slot, order_expiry
from probes.slot_time import SLOT_LATE, started_near_slot

SLOT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def slot(interval: int) -> Slot:
    return Slot(1, 1, 1, "af-lagos", SLOT, interval, {"timeout_s": 10})


def test_a_daily_probes_order_expires_within_the_rule(settings):
    settings.LATENCY_VISIBILITY_TIMEOUT = 150
    expires = order_expiry(slot(86_400))
    assert started_near_slot(expires, SLOT)
    assert SLOT + SLOT_LATE - timedelta(minutes=10) <= expires < SLOT + SLOT_LATE


def test_a_short_intervals_order_keeps_its_room_for_a_redelivery(settings):
    settings.LATENCY_VISIBILITY_TIMEOUT = 150
    assert order_expiry(slot(30)) == SLOT + timedelta(seconds=30 + 150 + 30)


def test_an_expiry_asked_for_is_capped_too():
    assert order_expiry(slot(60), SLOT + timedelta(hours=3)) < SLOT + SLOT_LATE
