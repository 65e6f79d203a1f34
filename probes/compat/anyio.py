"""anyio's private names (supported: anyio >=4.16.0,<5).

anyio imports its asyncio backend (anyio._backends._asyncio) the first time a coroutine uses it, which would put
that import inside the first measurement's clock: the engine imports this module, and so the backend, at start.
The module has had this name through every anyio 4 release; a 5 is read again before the range is widened.
"""

from __future__ import annotations

import anyio._backends._asyncio
import anyio.streams.tls  # noqa: F401  (public, but also imported lazily on a first TLS stream)

from probes.compat import require

MINIMUM, BELOW = "4.16.0", "5"
VERSION = require("anyio", MINIMUM, BELOW, module=__name__)
