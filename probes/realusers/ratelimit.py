"""The ingest's budgets per minute, counted in Postgres so every web process shares the count.

Each budget is one row per source, bucket and minute (IngestRate), taken from in one statement (INSERT ... ON
CONFLICT DO UPDATE ... WHERE ... RETURNING count), no extra service, exact across processes. A fixed one-minute
window: its known weakness, up to twice a budget across a minute's edge, is harmless for limits that protect
the database and the other senders rather than meter anyone.

The buckets, each with a budget of its own, so that one kind of traffic cannot use up another's:
- OTLP (`otlp`): spans plus metric points per source, LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE; a request
  counts at least one, so empty exports are not free;
- beacons per client address (`beacon-address:<hash>`), per target (`beacon-target:<id>`, or `-` for beacons
  naming no target we know) and per source (`beacon`): LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE,
  LATENCY_BEACONS_PER_TARGET_PER_MINUTE, LATENCY_BEACONS_PER_MINUTE. The browser key is public, so anyone can
  send beacons: the address's budget is taken first, so that a flood from one address is stopped there
  without using up what the source's other visitors have left.

A request is counted only where it fits (a refused request takes nothing from the budget that refused it, nor
from those after it), so a sender over its budget is refused until the minute ends, and an export too large for
what is left is refused whole, never half stored. The client's address is never stored: its bucket is named by
a keyed hash of it (SECRET_KEY), and an IPv6 address by its /64, the block one host is usually given."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection

OTLP = "otlp"
BEACON = "beacon"


def _minute(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


def _retry_after(now: datetime) -> int:
    """Seconds until the minute's window ends (for Retry-After, at least 1)."""
    return max(1, math.ceil((_minute(now) + timedelta(minutes=1) - now).total_seconds()))


def take(source_id: int, bucket: str, amount: int, limit: int, now: datetime | None = None) -> int | None:
    """Take `amount` from the source's bucket for this minute if it fits within `limit`: None when it did, else
    the seconds until the window ends (and nothing is taken)."""
    from probes.models import IngestRate

    now = now or datetime.now(UTC)
    if amount > limit:
        return _retry_after(now)
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {IngestRate._meta.db_table} AS r (source_id, bucket, minute, count) "
            "VALUES (%s, %s, %s, %s) "
            "ON CONFLICT ON CONSTRAINT ingest_rate_one_per_bucket_minute "
            "DO UPDATE SET count = r.count + EXCLUDED.count "
            "WHERE r.count + EXCLUDED.count <= %s RETURNING count",
            [source_id, bucket, _minute(now), amount, limit],
        )
        taken = cur.fetchone() is not None
    return None if taken else _retry_after(now)


def spent(source_id: int, bucket: str, limit: int, now: datetime | None = None) -> int | None:
    """None while the bucket has something left this minute, else the seconds until the window ends: a cheap
    look before the body of a request is read."""
    from probes.models import IngestRate

    now = now or datetime.now(UTC)
    count = (
        IngestRate.objects.filter(source_id=source_id, bucket=bucket, minute=_minute(now))
        .values_list("count", flat=True)
        .first()
    )
    return None if count is None or count < limit else _retry_after(now)


def address_bucket(address: str | None) -> str:
    """The bucket of a client's address: a keyed hash, so the table never holds the address itself; an IPv6
    address by its /64, since one host may use any address of its block."""
    try:
        ip = ipaddress.ip_address((address or "").strip("[]"))
    except ValueError:
        return "beacon-address:-"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            key = str(ip.ipv4_mapped)
        else:
            key = str(ipaddress.IPv6Network((ip, 64), strict=False).network_address) + "/64"
    else:
        key = str(ip)
    digest = hmac.new(settings.SECRET_KEY.encode(), key.encode(), hashlib.sha256).hexdigest()[:32]
    return f"beacon-address:{digest}"


def admit_beacon(source_id: int, address: str | None, target_id: int | None, now: datetime | None = None) -> int | None:
    """One beacon against the address's, the target's and the source's budgets, in that order (the first
    refusal stops there): None when admitted, else the seconds until the window ends."""
    now = now or datetime.now(UTC)
    budgets = (
        (address_bucket(address), settings.LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE),
        (
            f"beacon-target:{target_id if target_id is not None else '-'}",
            settings.LATENCY_BEACONS_PER_TARGET_PER_MINUTE,
        ),
        (BEACON, settings.LATENCY_BEACONS_PER_MINUTE),
    )
    for bucket, limit in budgets:
        retry_after = take(source_id, bucket, 1, limit, now)
        if retry_after is not None:
            return retry_after
    return None


def otlp_spent(source_id: int, now: datetime | None = None) -> int | None:
    """The source's OTLP budget is used up for this minute: the seconds until it ends, else None."""
    return spent(source_id, OTLP, settings.LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE, now)


def admit_otlp(source_id: int, items: int, now: datetime | None = None) -> int | None:
    """An export of `items` spans and metric points (at least one is counted): None when admitted, else the
    seconds until the window ends."""
    return take(source_id, OTLP, max(1, items), settings.LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE, now)
