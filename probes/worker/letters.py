"""Broker messages no task can take: the part of dead-letter handling a
region worker runs. Plain Python: a region host has no Django settings and no
database, so only the ingest worker (the one consumer of the ingest queue)
keeps a rejected message, through probes.deadletters, imported only there."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("probes.deadletters")

INGEST_QUEUE = "ingest"
# Characters of a rejected message shown in a log line: enough to recognise
# it, never a megabyte of garbage in the log.
LOG_PREVIEW = 300


def keeps_letters(consumed_queues: Iterable[str]) -> bool:
    """Whether this process stores dead letters: only the ingest worker, the
    one consumer of the ingest queue, has database credentials."""
    return INGEST_QUEUE in set(consumed_queues)


def preview(value: Any) -> str:
    """A short, single-line picture of a rejected message for a log line."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        size = len(value)
        text = bytes(value[: LOG_PREVIEW * 4]).decode("utf-8", "backslashreplace")
    else:
        try:
            text = json.dumps(value, ensure_ascii=True, default=repr)
        except (ValueError, RecursionError):
            text = repr(type(value))
        size = len(text)
    shown = text[:LOG_PREVIEW].encode("unicode_escape").decode("ascii")
    more = f" ... ({size:,} in all)" if size > LOG_PREVIEW else ""
    return shown + more


def reject_message(value: Any, *, source: str, reason: str, keep: bool, raw: bool = False) -> None:
    """A broker message no task can take. Kept as a dead letter by the
    ingest worker (`keep`), otherwise logged once, truncated."""
    if keep:
        from probes.deadletters import keep_rejected  # the database: the ingest worker only

        keep_rejected(value, source=source, reason=reason, raw=raw)
        return
    log.warning("dropped a message from %s: %s; message: %s", source, reason, preview(value))
