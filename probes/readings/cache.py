"""The in-process cache of merged rollup parts.

The dashboard re-reads the same weeks of rollups on every refresh, and they
only change when an hour is rebuilt, which stamps the hour's mark anew: keys
carry plan.Coverage.fingerprint() of the hours a value came from, so a
rebuilt hour is never served from an old merge, and no invalidation is
needed. Bounded by weight (histogram buckets held), not by entries: one
30-day merge holds far more than one time-series bucket.

cachetools' LRUCache with getsizeof does the bookkeeping; it is not
thread-safe, and ASGI serves sync views from a thread pool, hence the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any

from cachetools import LRUCache

# The most histogram buckets held at once: tens of megabytes of Python objects at most.
BUDGET = 500_000


class MergeCache:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        # Values are stored as (value, weight): the weight is the caller's
        # count of what a value holds, cheaper than measuring it again.
        self._lru: LRUCache = LRUCache(maxsize=budget, getsizeof=lambda item: item[1])
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            item = self._lru.get(key)
        return None if item is None else item[0]

    def put(self, key: Hashable, value: Any, weight: int = 1) -> None:
        if weight > self.budget:  # LRUCache would raise: too large to keep
            return
        with self._lock:
            self._lru[key] = (value, weight)

    def clear(self) -> None:
        with self._lock:
            self._lru.clear()

    @property
    def weight(self) -> int:
        # Typed float (getsizeof may return one); ours are ints.
        return int(self._lru.currsize)


merge_cache = MergeCache(budget=BUDGET)
