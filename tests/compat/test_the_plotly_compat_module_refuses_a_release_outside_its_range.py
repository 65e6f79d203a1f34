"""probes/compat/plotly.py reaches into plotly's private names:
it accepts the installed release and refuses one past or before its range,
naming plotly, the version found and the range supported."""

from __future__ import annotations

from tests.compat.checks import check_compat_module


def test_a_release_outside_the_range_is_refused_by_name():
    check_compat_module("probes.compat.plotly", "plotly", past="8.0.0", before="7.0.9")
