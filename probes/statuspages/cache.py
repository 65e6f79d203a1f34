"""The status pages' cache: a page's reading, and what its badges read, served for LATENCY_STATUS_CACHE_S from the
"status" cache (Redis, shared by the web processes), so a page read by hundreds of readers a second is read from
the database at most once per period.

Stale while refreshed: an entry is kept ten periods but fresh for one (and up to SPREAD more, drawn per entry, so
that a page's entries do not all go stale at once); the first request to find it stale takes a lock (cache.add,
atomic in Redis) and reads again, while the others serve the stale copy, and a process refreshes one entry at a
time. On an empty cache (a
start, or an entry evicted) the others wait for the one reading (each request runs in a thread of its own), up to
FILL_WAIT_S, then read for themselves.

Whoever saves or deletes a page (the admin, the REST API, `atlas apply`: services.forget_on_commit) empties its
entries once that commits (forget), so a page made private stops being served at once."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import caches

T = TypeVar("T")
KEEP_PERIODS = 10
SPREAD = 0.25
# One refresh at a time in this process (cached: stale entries only; an empty one is always filled).
_refreshing = threading.Semaphore(1)
_in_refresh = threading.local()
# How long a request waits for another's first read of an entry before reading it itself, and how often it looks.
FILL_WAIT_S = 5.0
FILL_POLL_S = 0.02


def _cache():
    return caches["status"]


def cached(key: str, read: Callable[[], T]) -> T:
    """read()'s value, from the cache while fresh; read again by one request once stale."""
    period = settings.LATENCY_STATUS_CACHE_S
    if period <= 0:
        return read()
    cache = _cache()
    entry: tuple[float, Any] | None = cache.get(key)
    now = time.time()
    if entry is not None and entry[0] > now:
        return entry[1]
    if entry is not None:
        # Stale: refreshed by one request of the site, and in this process by one request at a time. A page's
        # entries go stale together; refreshed side by side, their readings (Python, under one interpreter lock)
        # slowed every request the process served meanwhile, where one at a time leaves most of it to them.
        if getattr(_in_refresh, "active", False):
            # Read by the refresh this thread is doing (a page's HTML from its reading): part of it.
            return _refresh(cache, key, read, period, entry)
        if not _refreshing.acquire(blocking=False):
            return entry[1]
        _in_refresh.active = True
        try:
            return _refresh(cache, key, read, period, entry)
        finally:
            _in_refresh.active = False
            _refreshing.release()
    return _refresh(cache, key, read, period, entry)


def _refresh(cache: Any, key: str, read: Callable[[], T], period: float, entry: tuple[float, Any] | None) -> T:
    lock = f"{key}:refreshing"
    # Held while one request reads; its timeout only frees it from a request that died reading.
    if cache.add(lock, 1, timeout=period):
        try:
            value = read()
            # Fresh for the period and up to a quarter more, drawn per entry: a page's entries, filled together,
            # do not all go stale at the same moment. Never sooner than the period, as promised.
            fresh_for = period * (1 + random.uniform(0, SPREAD))
            cache.set(key, (time.time() + fresh_for, value), timeout=period * KEEP_PERIODS)
        finally:
            cache.delete(lock)
        return value
    if entry is not None:
        return entry[1]
    deadline = time.monotonic() + FILL_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(FILL_POLL_S)
        entry = cache.get(key)
        if entry is not None:
            return entry[1]
    return read()


def page_key(slug: str) -> str:
    return f"page:{slug}"


def reading_key(slug: str, *parts: object) -> str:
    return ":".join(["reading", slug, *(str(p) for p in parts)])


def forget(slug: str) -> None:
    """Drop the page's lookup, its reading, its rendered page in each language, its feed and its regions, and their
    refresh locks, so a changed title or set of targets shows on the next request, not a period later. Its badges'
    entries (one per target, metric, region and window asked for: too many to name) age out within their period;
    they are served only to whoever the page's lookup lets in."""
    from probes.statuspages.hosts import forget_domains

    keys = [
        page_key(slug),
        reading_key(slug),
        reading_key(slug, "feed"),
        reading_key(slug, "regions"),
        *(reading_key(slug, "html", code) for code, _name in settings.LANGUAGES),
    ]
    _cache().delete_many([*keys, *(f"{key}:refreshing" for key in keys)])
    # Its domain may have changed with it.
    forget_domains()
