"""Announce stored measurements on the channel layer: the one broadcast helper.

Called only after the transaction that stored the rows has committed, so a
browser never hears of a row it cannot read. Group names are built here and
nowhere else.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from channels.layers import get_channel_layer

from probes.runtime import BackgroundPortal

log = logging.getLogger(__name__)

GLOBAL_GROUP = "measurements"
MESSAGE_TYPE = "measurements.new"


def target_group(target_id: int) -> str:
    return f"target.{int(target_id)}"


def broadcast(items: list[dict]) -> None:
    """Send new measurements: one message per group per batch, never one per
    row, so a burst of thousands costs a handful of Redis round trips."""
    if not items:
        return
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        _broadcast_portal.get().start_task_soon(_send, layer, items).result(timeout=10)
    except Exception:
        log.warning("broadcast of %d measurements failed", len(items), exc_info=True)


# One long-lived loop per process for broadcasts. async_to_sync from a worker
# thread would build a thread, a loop and a Redis connection per batch; this
# keeps one connection pool warm.
_broadcast_portal = BackgroundPortal("broadcast-loop")


async def _send(layer, items: list[dict]) -> None:
    by_target: dict[int, list[dict]] = defaultdict(list)
    for item in items:
        by_target[item["target_id"]].append(item)
    await layer.group_send(GLOBAL_GROUP, {"type": MESSAGE_TYPE, "items": items})
    for target_id, rows in by_target.items():
        await layer.group_send(target_group(target_id), {"type": MESSAGE_TYPE, "items": rows})
