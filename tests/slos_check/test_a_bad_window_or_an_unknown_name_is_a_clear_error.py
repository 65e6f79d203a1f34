"""A window that is not one of the burn windows, or an objective name that does not exist, is refused with a
message naming it (exit status 2 from the command line, apart from the gate's 1)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from tests.slos_check.conftest import run


@pytest.mark.django_db
def test_a_window_outside_the_burn_windows_is_refused_naming_the_choices():
    with pytest.raises(CommandError, match=r"--window: invalid choice: '2h' \(choose from '5m', '30m', '1h'"):
        run("--window", "2h")


@pytest.mark.django_db
def test_an_unknown_objective_is_named():
    with pytest.raises(CommandError, match="no objective named 'nope', 'gone'") as raised:
        run("--slo", "nope", "gone")
    assert raised.value.returncode == 2
