"""Dead letters: what the ingest received and could not store, kept whole
with the reason, so that nothing reaching it is dropped silently.

Two kinds arrive here. Measurement payloads that fail validation, name an
unknown or mismatched probe, target or region, or that PostgreSQL refuses
(probes.ingest); and broker messages that are not task messages a worker can
read at all (latency.broker). Only a process consuming the ingest queue has
the database; a region worker logs a rejected message once, truncated.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, DataError, IntegrityError, connection, transaction

# The plain parts (no database) live with the region worker, which imports
# them without Django; re-exported here for the central side.
from probes.worker.letters import INGEST_QUEUE, LOG_PREVIEW, keeps_letters, preview, reject_message

__all__ = ["INGEST_QUEUE", "LOG_PREVIEW", "keeps_letters", "preview", "reject_message"]

log = logging.getLogger(__name__)

REASON_LIMIT = 2000
RECENT = timedelta(hours=24)
_BIGINT = 2**63


def as_stored(value: Any, *, raw: bool = False) -> tuple[Any, str]:
    """(jsonb value, text) keeping `value` exactly as received.

    jsonb when it holds the value faithfully; text otherwise: bytes that are
    not JSON (`raw`), and JSON that jsonb refuses (NaN and infinities, NUL,
    unpaired surrogates). The text is ASCII, so PostgreSQL always takes it.
    """
    if raw or isinstance(value, (bytes, bytearray, memoryview)):
        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
        return None, data.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")  # an unpaired surrogate fails here
    except (TypeError, ValueError, RecursionError):
        pass
    else:
        # jsonb cannot hold a NUL character in a string. SQL NULL stands for
        # "not JSON", so a JSON null is kept as text.
        if "\\u0000" not in text and value is not None:
            return value, ""
    try:
        return None, json.dumps(value, ensure_ascii=True, allow_nan=True, default=repr)
    except (ValueError, RecursionError) as exc:
        return None, f"(not representable: {exc})"


def _clean_text(value: str, limit: int) -> str:
    return value.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")[:limit]


def _id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and -_BIGINT <= value < _BIGINT:
        return value
    return None


def letter(
    value: Any, *, reason: str, source: str, received_at: datetime, raw: bool = False, names: dict | None = None
):
    """An unsaved DeadLetter for `value`, with whatever ids it names, or
    those given in `names` (probe_id, target_id, region_id, worker: for a
    value that holds them out of sight, such as a signed message; and
    message_id, payload_index: which ingest message and payload it is, the
    letter's unique key, see probes.fleet.trust.origin)."""
    from probes.models import DeadLetter

    payload, text = as_stored(value, raw=raw)
    fields = {}
    if isinstance(value, dict):
        for key in ("probe_id", "target_id", "region_id"):
            fields[key] = _id(value.get(key))
        if isinstance(value.get("worker"), str):
            fields["worker"] = _clean_text(value["worker"], 255)
    for key, named in (names or {}).items():
        if key == "worker" and isinstance(named, str):
            fields["worker"] = _clean_text(named, 255)
        elif key in ("probe_id", "target_id", "region_id") and _id(named) is not None:
            fields[key] = _id(named)
        elif key == "message_id" and isinstance(named, str) and named:
            fields["message_id"] = named[:64]
        elif key == "payload_index" and _id(named) is not None and 0 <= named < 2**31:
            fields["payload_index"] = named
    return DeadLetter(
        received_at=received_at,
        source=_clean_text(source, 200),
        reason=_clean_text(reason, REASON_LIMIT),
        payload=payload,
        payload_text=text,
        **fields,
    )


def record_many(items: list[tuple], *, source: str, received_at: datetime) -> None:
    """Store (value, reason) pairs, or (value, reason, names) triples (see
    `letter`), in the caller's transaction. A letter already kept for the
    same message and payload (a message delivered again) is not kept twice."""
    from probes.models import DeadLetter

    DeadLetter.objects.bulk_create(
        [
            letter(value, reason=reason, source=source, received_at=received_at, names=names[0] if names else None)
            for value, reason, *names in items
        ],
        ignore_conflicts=True,
    )


def record(
    value: Any, *, reason: str, source: str, received_at: datetime, raw: bool = False, names: dict | None = None
) -> None:
    """Store one, falling back to text if jsonb refuses what as_stored let
    through: the letter itself must never be the thing that is lost. Once
    per message and payload, as record_many."""
    from probes.models import DeadLetter

    item = letter(value, reason=reason, source=source, received_at=received_at, raw=raw, names=names)
    try:
        with transaction.atomic():
            DeadLetter.objects.bulk_create([item], ignore_conflicts=True)
    except (DataError, IntegrityError):
        if item.payload is None:
            raise
        item.pk = None
        item.payload, item.payload_text = None, json.dumps(value, ensure_ascii=True, default=repr)
        with transaction.atomic():
            DeadLetter.objects.bulk_create([item], ignore_conflicts=True)


def keep_rejected(value: Any, *, source: str, reason: str, raw: bool = False) -> None:
    """The ingest worker's half of probes.worker.letters.reject_message: keep
    a broker message no task can take as a dead letter."""
    from django.utils import timezone

    try:
        record(value, reason=reason, source=source, received_at=timezone.now(), raw=raw)
    except DatabaseError as exc:
        # The message is already off the queue (it could never be
        # delivered): the log is the last place it can be kept.
        connection.close()
        log.error(
            "could not keep a rejected message from %s as a dead letter (%s): %s; message: %s",
            source,
            str(exc).strip()[:200],
            reason,
            preview(value),
        )
        return
    log.warning("rejected a message from %s (kept as a dead letter): %s", source, reason)


def recent_count(now: datetime) -> int:
    """Dead letters received in the last 24 hours (the dashboard's health line)."""
    from probes.models import DeadLetter

    return DeadLetter.objects.filter(received_at__gte=now - RECENT).count()


def prune(cutoff: datetime) -> int:
    """Delete dead letters received before the cutoff, in batches."""
    from probes.models import DeadLetter
    from probes.retention import delete_older_than

    return delete_older_than(DeadLetter, "received_at", cutoff)
