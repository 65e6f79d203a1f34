"""Django's private names (supported: Django >=5.2,<5.3).

The URL resolver fills its tables on the first resolve or reverse; the web process builds them at start
(latency.startup) through the method that does it, `URLResolver._populate`.

Django's Redis cache makes its client, and with it redis-py's connection pool, in `RedisCache._cache` from
`_class`, `_servers` and `_options`, once per backend object; SharedPoolRedisCache shares one per process.
"""

from __future__ import annotations

import contextlib
import threading
from functools import cached_property
from typing import Any

from django.core.cache.backends.redis import RedisCache

from probes.compat import require

MINIMUM, BELOW = "5.2", "5.3"
VERSION = require("Django", MINIMUM, BELOW, module=__name__)


def populate_resolver() -> None:
    """Build the URL resolver's tables for the active language now rather than on the first request: the root
    resolver's, and those of each namespace's resolver, which reverse() builds apart for a namespaced name
    ({% url 'admin:index' %}) on its first use (django.urls.resolvers.get_ns_resolver). Top-level namespaces only:
    ours are."""
    from django.urls import NoReverseMatch, get_resolver, reverse

    resolver = get_resolver()
    resolver._populate()
    for namespace, (_prefix, inner) in resolver.namespace_dict.items():
        name = next((key for key in inner.reverse_dict if isinstance(key, str)), None)
        if name is None:
            continue
        # A name that takes arguments raises, after the namespace's resolver is built.
        with contextlib.suppress(NoReverseMatch):
            reverse(f"{namespace}:{name}")


class SharedPoolRedisCache(RedisCache):
    """Django's Redis cache, with one client, and so one connection pool, per process and configuration.

    django.core.cache.caches holds a backend object per thread and per async context, and under ASGI each request
    is a context of its own: every request made a new client, a new pool and a new connection to Redis (a
    connect, redis-py's handshake and its reading of its own version from the package metadata), which cost a
    cached status page more than the rest of its request. redis-py's pool is thread-safe; this shares it."""

    _clients: dict[str, Any] = {}
    _lock = threading.Lock()

    @cached_property
    def _cache(self) -> Any:
        key = repr((self._class, self._servers, sorted(self._options.items())))
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = self._class(self._servers, **self._options)
        return client
