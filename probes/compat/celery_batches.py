"""celery-batches' private names (supported: celery-batches >=0.11,<0.12).

A Batches task keeps the messages it has not flushed yet in `_buffer` and its flush timer in `_tref`; the ingest
task (probes.tasks.IngestBatch) resets both when the worker reconnects to the broker.
"""

from __future__ import annotations

from typing import Any

from probes.compat import require

MINIMUM, BELOW = "0.11", "0.12"
VERSION = require("celery-batches", MINIMUM, BELOW, module=__name__)


def forget_buffered(task: Any) -> None:
    """Cancel the batch task's flush timer and drop the messages it holds (they came from a connection that is
    gone: they can no longer be acknowledged, and the broker delivers them again)."""
    if task._tref is not None:
        task._tref.cancel()
    task._tref = None
    while not task._buffer.empty():
        task._buffer.get_nowait()
