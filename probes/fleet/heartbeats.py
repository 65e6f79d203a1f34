"""The central side of a region worker's heartbeat (probes/worker/heartbeat.py).

A heartbeat is verified like a batch of results (key, region, schema,
signature), then kept: the worker's row (Worker, one per process and
region) moved forward, never back, and a line of short history (WorkerBeat).
The answer goes to the worker's reply queue, named in the beat, and only to
a queue under the verified region's own prefix: a heartbeat cannot make the
central site publish anywhere else.

A refused heartbeat is answered too (ok false and the reason) when its
reply queue is well formed for the region it claims, so a worker with a
wrong or retired credential is told why and stops; it is kept as a dead
letter once per worker instance, not every few seconds.

Every answer is signed with the central key (probes.fleet.central) for the
region, the worker instance and the beat's seq its reply queue and beat
name: a worker believes no other (probes.worker.heartbeat).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, connection, transaction

from probes.fleet.central import UnreadableCentralKey
from probes.worker.protocol import (
    HEARTBEAT,
    REPLY,
    REPLY_QUEUE_RE,
    SCHEMA,
    SLUG_RE,
    Refused,
    envelope_header,
    open_sealed,
    seal_central,
)

log = logging.getLogger(__name__)

HEALTH_QUEUE = "health"
STATES = ("starting", "running", "stopped")
_INSTANCE_CHARS = set("0123456789abcdef")
_MAX_INT = 2**31 - 1


@dataclass(frozen=True)
class Outcome:
    ok: bool
    reason: str | None
    region: dict | None
    reply_to: str | None
    seq: int | None
    state: str | None


def _time(value: object, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Refused(f"heartbeat field {name} is not an ISO 8601 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise Refused(f"heartbeat field {name} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise Refused(f"heartbeat field {name} has no time zone")
    return moment


def _count(content: dict, name: str, *, nullable: bool = False, limit: int = _MAX_INT) -> int | None:
    value = content.get(name)
    if value is None and nullable:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= limit:
        raise Refused(f"heartbeat field {name} is not a count")
    return value


def _ms(content: dict, name: str) -> float | None:
    value = content.get(name)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not abs(value) < 1e12:
        raise Refused(f"heartbeat field {name} is not a number of milliseconds")
    return float(value)


def _text(content: dict, name: str, limit: int) -> str:
    value = content.get(name)
    if not isinstance(value, str):
        raise Refused(f"heartbeat field {name} is missing")
    return value.replace("\x00", "")[:limit]


def read_content(content: Any) -> dict:
    """The heartbeat's fields, checked; Refused names the first bad one."""
    if not isinstance(content, dict):
        raise Refused("the heartbeat is not a JSON object")
    instance = content.get("instance")
    if not isinstance(instance, str) or len(instance) != 32 or not set(instance) <= _INSTANCE_CHARS:
        raise Refused("heartbeat field instance is not 32 hex digits")
    state = content.get("state")
    if state not in STATES:
        raise Refused(f"heartbeat field state is not one of {', '.join(STATES)}")
    if content.get("schema") != SCHEMA:
        raise Refused(f"the heartbeat's content says schema {str(content.get('schema'))[:20]}, its envelope {SCHEMA}")
    started_at = _time(content.get("started_at"), "started_at")
    if started_at is None:
        raise Refused("heartbeat field started_at is missing")
    return {
        "instance": instance,
        "state": state,
        "name": _text(content, "name", 255),
        "hostname": _text(content, "hostname", 255),
        "release": _text(content, "release", 40),
        "engine": str(content.get("engine") or "")[:200],
        "started_at": started_at,
        "sent_at": _time(content.get("sent_at"), "sent_at"),
        "seq": _count(content, "seq", limit=2**62),
        "in_flight": _count(content, "in_flight"),
        "runs": _count(content, "runs", limit=2**62),
        "last_run_at": _time(content.get("last_run_at"), "last_run_at"),
        "queue_depth": _count(content, "queue_depth", nullable=True),
        "clock_offset_ms": _ms(content, "clock_offset_ms"),
        "round_trip_ms": _ms(content, "round_trip_ms"),
        "reply_to": content.get("reply_to") if isinstance(content.get("reply_to"), str) else None,
        # What the worker refused (orders and replies not signed by this site); absent means none.
        "refused_orders": _count(content, "refused_orders", nullable=True, limit=2**62) or 0,
        "refused_replies": _count(content, "refused_replies", nullable=True, limit=2**62) or 0,
        "last_refusal": str(content.get("last_refusal") or "").replace("\x00", "")[:300],
    }


def _unverified(message: object) -> tuple[str | None, dict]:
    """The region a refused heartbeat claims and what its body says, for the
    refusal's reply only: nothing of it is stored as true."""
    if not isinstance(message, dict):
        return None, {}
    region = message.get("region") if isinstance(message.get("region"), str) else None
    try:
        body = json.loads(message["body"]) if isinstance(message.get("body"), str) else {}
    except (ValueError, RecursionError):
        body = {}
    return region, body if isinstance(body, dict) else {}


def reply_target(reply_to: object, region: str | None, instance: object) -> str | None:
    """The reply queue, when it is the named worker's queue under the region's own prefix."""
    if not isinstance(reply_to, str) or region is None:
        return None
    match = REPLY_QUEUE_RE.match(reply_to)
    if match is None or match["slug"] != region:
        return None
    if isinstance(instance, str) and match["instance"] != instance:
        return None
    return reply_to


_UPSERT = """
INSERT INTO {worker} AS w (
    instance, region_id, key_id, name, hostname, release, schema, engine, state, started_at, last_seen,
    last_run_at, runs, in_flight, queue_depth, clock_offset_ms, round_trip_ms, refused_orders, refused_replies,
    last_refusal
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (instance) DO UPDATE SET
    key_id = EXCLUDED.key_id, name = EXCLUDED.name, hostname = EXCLUDED.hostname, release = EXCLUDED.release,
    schema = EXCLUDED.schema, engine = EXCLUDED.engine, state = EXCLUDED.state, started_at = EXCLUDED.started_at,
    last_seen = EXCLUDED.last_seen, last_run_at = EXCLUDED.last_run_at, runs = EXCLUDED.runs,
    in_flight = EXCLUDED.in_flight, queue_depth = EXCLUDED.queue_depth,
    clock_offset_ms = COALESCE(EXCLUDED.clock_offset_ms, w.clock_offset_ms),
    round_trip_ms = COALESCE(EXCLUDED.round_trip_ms, w.round_trip_ms),
    refused_orders = EXCLUDED.refused_orders, refused_replies = EXCLUDED.refused_replies,
    last_refusal = EXCLUDED.last_refusal
-- Compare-and-swap: a beat handled late (redelivered, or overtaken by the next one) never moves the
-- row back; a stopped worker stays stopped (its instance never runs again); and an instance is only
-- ever its own region's (another region's key cannot take over a row).
WHERE w.last_seen <= EXCLUDED.last_seen AND w.state <> 'stopped' AND w.region_id = EXCLUDED.region_id
RETURNING id
"""


def store(fields: dict, *, region_id: int, key_id: str, received_at: datetime) -> int | None:
    """Upsert the Worker row and append a WorkerBeat; the row's id, or None
    when the beat was older than what is stored (nothing written)."""
    from probes.models import Worker, WorkerBeat

    state = Worker.STOPPED if fields["state"] == "stopped" else Worker.RUNNING
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            _UPSERT.format(worker=connection.ops.quote_name(Worker._meta.db_table)),
            [
                fields["instance"],
                region_id,
                key_id,
                fields["name"],
                fields["hostname"],
                fields["release"],
                SCHEMA,
                fields["engine"],
                state,
                fields["started_at"],
                received_at,
                fields["last_run_at"],
                fields["runs"],
                fields["in_flight"],
                fields["queue_depth"],
                fields["clock_offset_ms"],
                fields["round_trip_ms"],
                fields["refused_orders"],
                fields["refused_replies"],
                fields["last_refusal"],
            ],
        )
        row = cur.fetchone()
        if row is None:
            return None
        WorkerBeat.objects.create(
            worker_id=row[0],
            at=received_at,
            in_flight=fields["in_flight"],
            runs=fields["runs"],
            queue_depth=fields["queue_depth"],
            clock_offset_ms=fields["clock_offset_ms"],
        )
        return row[0]


def verify(message: object, now: datetime) -> tuple[Any, dict, dict]:
    """(known key, the region's id/slug/name, checked fields) of a good heartbeat; Refused otherwise."""
    from probes.fleet.keys import known_keys, unknown_key_reason
    from probes.models import Region

    kind, region, key_id = envelope_header(message)
    if kind != HEARTBEAT:
        raise Refused(f"expected a heartbeat message, got {kind}")
    info = Region.objects.filter(slug=region).values("id", "slug", "name").first()
    if info is None:
        raise Refused(f"region {region} does not exist on this site: create it in the admin first")
    key = known_keys([key_id]).get(key_id)
    if key is None:
        raise Refused(unknown_key_reason(key_id, region))
    problem = key.problem(region, now)
    if problem:
        raise Refused(problem)
    assert isinstance(message, dict)  # envelope_header checked it
    opened = open_sealed(message, key.key, kind=HEARTBEAT)
    return key, info, read_content(opened.content)


def handle(message: object, *, now: datetime | None = None) -> Outcome:
    """Verify and keep one heartbeat. Never raises for a bad message."""
    received_at = now or datetime.now(UTC)
    try:
        key, info, fields = verify(message, received_at)
    except Refused as exc:
        claimed, body = _unverified(message)
        claimed = claimed if claimed and SLUG_RE.match(claimed) else None
        return Outcome(
            ok=False,
            reason=str(exc),
            region=None,
            reply_to=reply_target(body.get("reply_to"), claimed, body.get("instance")),
            seq=body.get("seq") if isinstance(body.get("seq"), int) else None,
            state=body.get("state") if body.get("state") in STATES else None,
        )
    store(fields, region_id=key.region_id, key_id=key.key.key_id, received_at=received_at)
    return Outcome(
        ok=True,
        reason=None,
        region=info,
        reply_to=reply_target(fields["reply_to"], key.region_slug, fields["instance"]),
        seq=fields["seq"],
        state=fields["state"],
    )


def reply_body(outcome: Outcome, received_at: datetime) -> dict:
    """The answer, signed with the central key(s) for the worker its reply queue names (region and instance)
    and the beat it answers (seq). Only for an outcome with a reply queue."""
    from probes.fleet.central import signers

    match = REPLY_QUEUE_RE.match(outcome.reply_to or "")
    if match is None:
        raise ValueError("a heartbeat answer needs the worker's reply queue")
    content = {
        "ok": outcome.ok,
        "reason": outcome.reason,
        "seq": outcome.seq,
        "instance": match["instance"],
        "received_at": received_at.isoformat(),
        "replied_at": datetime.now(UTC).isoformat(),
        "region": outcome.region,
    }
    return seal_central(REPLY, match["slug"], signers(), content)


def send_reply(app, outcome: Outcome, received_at: datetime) -> bool:
    """Publish the answer (signed JSON) to the worker's reply queue, through
    the broker's default exchange: routed by queue name on RabbitMQ and on
    the Redis transport alike. Nothing is declared: the worker did."""
    if outcome.reply_to is None or outcome.state == "stopped":
        # A stopped worker reads no more replies; answering would leave a message behind.
        return False
    body = reply_body(outcome, received_at)
    with app.producer_or_acquire() as producer:
        producer.publish(
            body,
            exchange="",
            routing_key=outcome.reply_to,
            serializer="json",
            # A reply nobody reads in a minute is useless (RabbitMQ drops it).
            expiration=60,
            retry=True,
            retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1},
        )
    return True


def keep_refusal(message: object, outcome: Outcome, *, source: str, now: datetime) -> bool:
    """Keep a refused heartbeat as a dead letter, once per worker instance and
    reason (a refused worker beats every few seconds until it stops)."""
    from probes import deadletters
    from probes.models import DeadLetter

    _claimed, body = _unverified(message)
    instance = body.get("instance")
    worker = f"heartbeat {instance}" if isinstance(instance, str) and len(instance) <= 64 else "heartbeat"
    reason = f"heartbeat refused: {outcome.reason}"
    if DeadLetter.objects.filter(worker=worker, reason=reason[: deadletters.REASON_LIMIT]).exists():
        return False
    deadletters.record(message, reason=reason, source=source, received_at=now)
    return True


def take_heartbeat(args, kwargs, *, app, source: str = HEALTH_QUEUE) -> str:
    """The probes.heartbeat task's body: one argument, a sealed heartbeat."""
    received_at = datetime.now(UTC)
    message: object = args[0] if len(args) == 1 and not kwargs else {"args": list(args), "kwargs": kwargs}
    try:
        outcome = handle(message, now=received_at)
        if not outcome.ok and keep_refusal(message, outcome, source=source, now=received_at):
            log.warning("refused a heartbeat (kept as a dead letter): %s", outcome.reason)
    except DatabaseError as exc:
        # Not answered: the worker counts a missed reply and beats again in a few seconds; a
        # heartbeat is worth nothing by the time the database is back, so it is not kept for later.
        connection.close()
        log.warning("a heartbeat was not kept: database unavailable (%s)", " ".join(str(exc).split())[:200])
        return "database unavailable"
    try:
        send_reply(app, outcome, received_at)
    except (DatabaseError, UnreadableCentralKey) as exc:
        # Unanswered, the worker counts a missed reply; an unsigned answer it would not believe anyway.
        connection.close()
        log.warning("a heartbeat was not answered: no central key to sign with (%s)", str(exc)[:300])
        return "not answered"
    return "ok" if outcome.ok else "refused"
