"""Django's private names (supported: Django >=5.2,<5.3).

The URL resolver fills its tables on the first resolve or reverse; the web process builds them at start
(latency.startup) through the method that does it, `URLResolver._populate`.
"""

from __future__ import annotations

import contextlib

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
