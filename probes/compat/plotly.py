"""plotly's private names (supported: plotly >=7.1.0,<8).

A layout checks every property set on it against plotly's schema unless its `_validate` flag is off; the charts
(latency.charts) set the registered template, already valid, with the check off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from probes.compat import require

MINIMUM, BELOW = "7.1.0", "8"
VERSION = require("plotly", MINIMUM, BELOW, module=__name__)


@contextlib.contextmanager
def unvalidated(layout: Any) -> Iterator[Any]:
    """The layout, taking properties without checking them against plotly's schema until the block ends."""
    layout._validate = False
    try:
        yield layout
    finally:
        layout._validate = True
