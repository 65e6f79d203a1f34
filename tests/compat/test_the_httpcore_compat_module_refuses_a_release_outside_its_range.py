"""probes/compat/httpcore.py reaches into httpcore's private names:
it accepts the installed release and refuses one past or before its range,
naming httpcore, the version found and the range supported."""

from __future__ import annotations

from tests.compat.checks import check_compat_module, check_import_refused


def test_a_release_outside_the_range_is_refused_by_name():
    check_compat_module("probes.compat.httpcore", "httpcore", past="1.1.0", before="1.0.8")


def test_importing_it_beside_a_release_past_the_range_stops_with_the_message(tmp_path):
    check_import_refused("probes.compat.httpcore", "httpcore", "1.1.0", tmp_path)
