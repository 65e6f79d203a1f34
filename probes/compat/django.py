"""Django's private names (supported: Django >=5.2,<5.3).

The URL resolver fills its tables on the first resolve or reverse; the web process builds them at start
(latency.startup) through the method that does it, `URLResolver._populate`.
"""

from __future__ import annotations

from probes.compat import require

MINIMUM, BELOW = "5.2", "5.3"
VERSION = require("Django", MINIMUM, BELOW, module=__name__)


def populate_resolver() -> None:
    """Build the root URL resolver's tables now rather than on the first request."""
    from django.urls import get_resolver

    get_resolver()._populate()
