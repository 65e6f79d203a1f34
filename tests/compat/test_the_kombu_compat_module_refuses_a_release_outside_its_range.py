"""probes/compat/kombu.py reaches into kombu's private names:
it accepts the installed release and refuses one past or before its range,
naming kombu, the version found and the range supported."""

from __future__ import annotations

from tests.compat.checks import check_compat_module


def test_a_release_outside_the_range_is_refused_by_name():
    check_compat_module("probes.compat.kombu", "kombu", past="5.8.0", before="5.6.9")
