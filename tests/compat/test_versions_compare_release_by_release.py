"""The range check compares releases number by number (1.10 is after 1.9), ignores pre-release tails, and refuses a
version it cannot read rather than guessing."""

from __future__ import annotations

import pytest

from probes.compat import UnsupportedVersion, supported


def test_releases_compare_number_by_number():
    assert supported("1.10.0", "1.9", "2")
    assert not supported("1.9.9", "1.10", "2")
    assert supported("5.7.0rc1", "5.7.0", "5.8")
    assert not supported("5.8", "5.7.0", "5.8")


def test_an_unreadable_version_is_refused():
    with pytest.raises(UnsupportedVersion, match="cannot read the version"):
        supported("dev", "1.0", "2")
