"""The example values of secrets (SECRET_KEY, the URLs with passwords, the region credential, the metrics token)
are empty or say CHANGE-ME, so a copied deploy example can never run on a guessable secret."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from probes.conf.catalog import SETTINGS


@pytest.mark.parametrize("entry", [e for e in SETTINGS if e.secret], ids=lambda e: e.name)
def test_a_secret_in_the_list_has_no_example_value_that_could_pass_for_a_real_one(entry):
    # A copied example file must never run on a guessable secret: a URL's password says CHANGE-ME, anything
    # else is left empty.
    if entry.example and "://" in entry.example:
        assert urlsplit(entry.example).password in (None, "CHANGE-ME")
    else:
        assert not entry.example
