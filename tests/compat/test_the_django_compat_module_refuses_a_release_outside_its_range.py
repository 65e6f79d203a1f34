"""probes/compat/django.py reaches into Django's private names:
it accepts the installed release and refuses one past or before its range,
naming Django, the version found and the range supported."""

from __future__ import annotations

from tests.compat.checks import check_compat_module, check_import_refused


def test_a_release_outside_the_range_is_refused_by_name():
    check_compat_module("probes.compat.django", "Django", past="5.3", before="5.1.9")


def test_importing_it_beside_a_release_past_the_range_stops_with_the_message(tmp_path):
    check_import_refused("probes.compat.django", "Django", "5.3", tmp_path)
