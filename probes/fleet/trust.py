"""Which results the central ingest believes.

A region worker sends each batch of measurements as one sealed `results`
message (probes.worker.protocol): the list of payloads as JSON text, signed
with its region's credential. Here a batch of such messages is opened:

- a message that is not a sealed schema-2 results message, names a key this
  site does not know, a key of another region or a retired key, or whose
  signature does not match, is refused whole, with the reason;
- inside a message that opens, a payload naming another region than the
  signing key's is refused alone: a Lagos credential speaks only for Lagos;
- the rest goes on to the ordinary validation and storage (probes.ingest).

Refused messages are kept as dead letters as they arrived (the envelope
holds no secret: a signature and a public key id). Cost: one query for all
the keys a batch names, one signature check and one JSON parse per message,
never per payload. No cache of keys: a retired key is refused at once.

Each payload keeps where it came from (its message's identity and its place
in the message's list), and so does each refusal: a message delivered again
(a worker killed after storing, before acknowledging) then finds its dead
letters already kept, and keeps none twice (DeadLetter's unique key).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from probes.worker.protocol import RESULTS, Refused, envelope_header, open_sealed, schema_refusal

# Bodies larger than this are not parsed just to name a refused message's
# worker in its dead letter: a forged megabyte costs a parse only if signed.
_PEEK_LIMIT = 256 * 1024


# Task ids are UUIDs (36 characters); a longer one (a forged message's) is kept by its digest.
_ID_LIMIT = 64


def message_identity(args: object, kwargs: object, task_id: object = None) -> str:
    """What names one ingest message across deliveries: its task id (the broker delivers a message again with
    it), or for a message without one a digest of what it holds (the same message, the same digest)."""
    if isinstance(task_id, str) and 0 < len(task_id) <= _ID_LIMIT:
        return task_id
    if isinstance(task_id, str) and task_id:
        return hashlib.sha256(task_id.encode("utf-8", "surrogatepass")).hexdigest()
    text = json.dumps([args, kwargs], sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class MessageRef:
    """One ingest message, as its dead letters name it (message_identity): worked out only when a letter needs
    it, so a message stored whole costs no digest."""

    __slots__ = ("_args", "_id", "_kwargs", "_task_id")

    def __init__(self, args: object, kwargs: object, task_id: object = None) -> None:
        self._args, self._kwargs, self._task_id = args, kwargs, task_id
        self._id: str | None = None

    @property
    def id(self) -> str:
        if self._id is None:
            self._id = message_identity(self._args, self._kwargs, self._task_id)
        return self._id


class Origin(NamedTuple):
    """Where a payload came from: its message, and its place in the message's list (None: the message as a
    whole). names() are what key its dead letter (probes.deadletters.letter)."""

    message: MessageRef
    index: int | None = None

    def names(self) -> dict:
        return {"message_id": self.message.id, "payload_index": self.index}


@dataclass
class Opened:
    """A batch of ingest messages, opened: the payloads to store with their
    origins (one per payload), and the (value, reason, names) of what is
    refused, for the dead-letter table."""

    payloads: list = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    refused: list[tuple[Any, str, dict]] = field(default_factory=list)
    messages_refused: int = 0


def open_results(messages: list[tuple], now: datetime) -> Opened:
    """Open each ingest task message, given as (args, kwargs, label) or (args,
    kwargs, label, task id): one argument, a sealed results message."""
    from probes.fleet.keys import known_keys, unknown_key_reason

    out = Opened()
    sealed: list[tuple[dict, str, str, MessageRef]] = []  # (message, claimed region, key_id, the message)
    # Refused before a key: (value, reason, claimed region, the message).
    claimed: list[tuple[Any, str, str | None, MessageRef]] = []
    for args, kwargs, label, *task_id in messages:
        identity = MessageRef(args, kwargs, task_id[0] if task_id else None)
        if not (isinstance(args, (list, tuple)) and len(args) == 1 and not kwargs):
            claimed.append(
                (
                    {"args": args, "kwargs": kwargs},
                    f"task message {label}: expected one argument, a sealed results message",
                    None,
                    identity,
                )
            )
            continue
        message = args[0]
        try:
            if _unsigned_measurement(message):
                raise Refused(schema_refusal(1, "0.1.x"))
            kind, region, key_id = envelope_header(message)
            if kind != RESULTS:
                raise Refused(f"a {kind} message on the ingest queue, which takes {RESULTS} only")
        except Refused as exc:
            claimed.append((message, str(exc), _claimed_region(message), identity))
            continue
        sealed.append((message, region, key_id, identity))

    keys = known_keys({key_id for _, _, key_id, _ in sealed}) if sealed else {}
    for message, region, key_id, identity in sealed:
        known = keys.get(key_id)
        if known is None:
            claimed.append((message, unknown_key_reason(key_id, region), region, identity))
            continue
        problem = known.problem(region, now)
        if problem is not None:
            claimed.append((message, problem, region, identity))
            continue
        try:
            content = open_sealed(message, known.key, kind=RESULTS).content
        except Refused as exc:
            claimed.append((message, str(exc), region, identity))
            continue
        if not isinstance(content, list):
            out.refused.append(
                (
                    message,
                    f"the signed results body is not a list of measurements (a {type(content).__name__})",
                    {"region_id": known.region_id, **Origin(identity).names()},
                )
            )
            out.messages_refused += 1
            continue
        for index, payload in enumerate(content):
            # Non-dicts go on: validation names what is wrong with them.
            if isinstance(payload, dict) and payload.get("region_id") != known.region_id:
                shown = str(payload.get("region_id"))[:40]
                out.refused.append(
                    (
                        payload,
                        f"region {shown} is not the region of the signing key ({known.region_slug})",
                        Origin(identity, index).names(),
                    )
                )
            else:
                out.payloads.append(payload)
                out.origins.append(Origin(identity, index))

    if claimed:
        region_ids = _region_ids({region for _, _, region, _ in claimed if region})
        for value, reason, region, identity in claimed:
            names = _named(value)
            if region:
                names["region_id"] = region_ids.get(region)
            out.refused.append((value, reason, {**names, **Origin(identity).names()}))
        out.messages_refused += len(claimed)
    return out


def _unsigned_measurement(message: object) -> bool:
    # Release 0.1 also sent one bare measurement, not in a list.
    return isinstance(message, dict) and "schema" not in message and "result" in message


def _claimed_region(message: object) -> str | None:
    region = message.get("region") if isinstance(message, dict) else None
    return region if isinstance(region, str) and len(region) <= 50 else None


def _region_ids(slugs: set[str]) -> dict[str, int]:
    from probes.models import Region

    return dict(Region.objects.filter(slug__in=slugs).values_list("slug", "id")) if slugs else {}


def _named(value: object) -> dict:
    """The worker and region a refused message says it comes from (its own,
    unverified claim: names to look for, not a proof), from its first
    measurement: in the signed body, or the bare list of release 0.1."""
    content: object = value
    if isinstance(value, dict) and isinstance(value.get("body"), str) and len(value["body"]) <= _PEEK_LIMIT:
        try:
            content = json.loads(value["body"])
        except (ValueError, RecursionError):
            return {}
    first = content[0] if isinstance(content, list) and content else content
    if not isinstance(first, dict):
        return {}
    names = {key: first[key] for key in ("worker", "region_id") if key in first}
    return names
