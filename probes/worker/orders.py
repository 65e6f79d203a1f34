"""Which run orders a region worker runs: only those the central site signed.

A region host holds a broker login, and on Redis every region host holds the
same password: anyone with it can push a Celery message onto any region's
queue. A run order names a target URL, its headers and the variable holding
the provider's key, so a made-up order would have a worker send its keys
wherever the order says. So the central scheduler signs every order
(probes.scheduling.publish, with the central key of probes.fleet.central), and
a worker runs one only when all of these hold:

- a signature verifies with a central key its credential carries;
- the order is for a region this worker serves, and it arrived on that
  region's own queue (a Tokyo order pushed onto Frankfurt's queue is not
  a Frankfurt run, nor a Tokyo one taken from Frankfurt);
- its signed expiry has not passed (an order copied off the broker cannot be
  replayed later).

Anything else is refused (probes.worker.heartbeat counts it and logs the first
refusal of each kind). Plain Python, no Django.
"""

from __future__ import annotations

from datetime import datetime

from probes.worker import context
from probes.worker.protocol import ORDER, Refused, open_central, region_queue


def verify_order(args, kwargs, *, queue: str, now: datetime) -> tuple[dict, datetime, int]:
    """(content, scheduled_for, interval) of a run order this worker may run; Refused otherwise."""
    from probes.runtime import BadRunOrder, order_schema_refusal, parse_run_order

    if kwargs or not isinstance(args, (list, tuple)) or len(args) != 1:
        raise Refused("expected one argument, a signed run order", why="unsigned")
    message = args[0]
    if isinstance(message, dict):
        refusal = order_schema_refusal(message)
        if refusal:
            raise Refused(refusal, why="schema")
    claimed = message.get("region") if isinstance(message, dict) else None
    if isinstance(claimed, str) and not context.serves(claimed):
        # Checked before the signature: no key of ours could vouch for it, and it costs nothing.
        raise Refused(
            f"a run order for region {claimed[:60]} arrived on {queue}: this worker serves "
            f"{','.join(context.regions())}",
            why="other-region",
        )
    keys = context.credential(claimed).central_keys() if isinstance(claimed, str) else {}
    region, content = open_central(message, ORDER, keys)
    if queue != region_queue(region):
        raise Refused(f"a signed run order for region {region} arrived on {queue}, not on its own queue", why="queue")
    if not isinstance(content, dict) or content.get("region") != region:
        raise Refused(f"the signed run order's body does not name region {region}", why="malformed")
    try:
        _message, scheduled, interval = parse_run_order((content,), {})
    except BadRunOrder as exc:
        raise Refused(f"a malformed signed run order: {exc}", why="malformed") from None
    try:
        expires = datetime.fromisoformat(content.get("expires"))
    except (TypeError, ValueError):
        raise Refused("the signed run order has no expiry", why="malformed") from None
    if expires.tzinfo is None:
        raise Refused("the signed run order's expiry has no time zone", why="malformed")
    if now >= expires:
        raise Refused(
            f"a run order for region {region} (slot {scheduled.isoformat()}) expired at {expires.isoformat()}: "
            "a replayed order",
            why="expired",
        )
    return content, scheduled, interval
