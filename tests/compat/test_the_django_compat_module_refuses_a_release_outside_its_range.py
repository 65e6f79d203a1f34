"""probes/compat/django.py reaches into Django's private names:
it accepts the installed release and refuses one past or before its range,
naming Django, the version found and the range supported."""

from __future__ import annotations

from tests.compat.checks import check_compat_module


def test_a_release_outside_the_range_is_refused_by_name():
    check_compat_module("probes.compat.django", "Django", past="5.3", before="5.1.9")
