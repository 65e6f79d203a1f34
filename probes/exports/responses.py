"""Streaming a CSV export as an HTTP response, within a bounded number of slots.

Each export holds a PostgreSQL connection of its own for its whole stream
(regions.csv up to LATENCY_EXPORT_READERS, probes.exports.pgcopy.copy_csv_parts),
so the number streaming at once is capped per process
(LATENCY_MAX_CONCURRENT_EXPORTS); one over the cap is refused with 429 and
Retry-After before any connection is opened. The site's export views and
the admin's "Export selected" action share the one cap, since they share
the one pool of connections.
"""

from __future__ import annotations

import threading
import weakref

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse

# Seconds a refused client is asked to wait: exports of a day take seconds.
RETRY_AFTER_S = 10


class ExportSlots:
    """How many exports this process is streaming, bounded by
    LATENCY_MAX_CONCURRENT_EXPORTS (read per call: tests change it). Each
    export holds a PostgreSQL connection of its own for its whole stream,
    so this bounds the connections exports can open."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active = 0

    def take(self) -> ExportSlot | None:
        with self._lock:
            if self.active >= settings.LATENCY_MAX_CONCURRENT_EXPORTS:
                return None
            self.active += 1
            return ExportSlot(self)

    def give_back(self, slot: ExportSlot) -> None:
        # Called from the stream's end, its cancellation, response.close() (in
        # another thread) and the finalizer: whichever comes first counts, once.
        with self._lock:
            if slot.held:
                slot.held = False
                self.active -= 1


class ExportSlot:
    def __init__(self, slots: ExportSlots) -> None:
        self._slots = slots
        self.held = True

    def release(self) -> None:
        self._slots.give_back(self)


SLOTS = ExportSlots()


class ExportResponse(StreamingHttpResponse):
    """A CSV stream that holds an export slot until it ends, fails, or the client goes away.

    Django's ASGI handler closes the iterator it gets from __aiter__ (and
    cancels it on a disconnect) but neither closes the generators inside
    nor calls close() after a cancellation, so the inner generator (and
    its database connection) is closed here, explicitly."""

    def __init__(self, chunks, slot: ExportSlot, **kwargs) -> None:
        super().__init__(chunks, **kwargs)
        self._chunks = chunks
        self._slot = slot
        # A client that leaves before the body starts cancels the response
        # before __aiter__ or close() ever run: the slot then comes back when
        # the response object is dropped.
        weakref.finalize(self, slot.release)

    async def __aiter__(self):
        try:
            async for part in super().__aiter__():
                yield part
        finally:
            try:
                await self._chunks.aclose()
            finally:
                self._slot.release()

    def close(self) -> None:
        self._slot.release()
        super().close()


def too_many_exports() -> HttpResponse:
    response = HttpResponse(
        "Too many exports are running at once; try again in a few seconds.\n",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response


def csv_response(chunks, name: str) -> HttpResponse:
    slot = SLOTS.take()
    if slot is None:
        # `chunks` was never started: it holds no connection yet.
        return too_many_exports()
    response = ExportResponse(chunks, slot, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    # Live data, and possibly large: never cached by a proxy.
    response["Cache-Control"] = "no-store"
    # Tells nginx-style proxies to pass the stream through as it comes.
    response["X-Accel-Buffering"] = "no"
    return response
