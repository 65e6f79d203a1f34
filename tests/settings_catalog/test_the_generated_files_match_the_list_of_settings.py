"""docs/reference/configuration.md and deploy/*.env.example are what the one list of settings renders:
after an edit of probes/conf/catalog.py, `make settings-docs` brings them along."""

from __future__ import annotations

import pytest

from probes.conf.catalog import SETTINGS
from probes.conf.render import OUTPUTS
from tests.support import ROOT


@pytest.mark.parametrize("relative", sorted(OUTPUTS))
def test_the_committed_file_is_what_the_list_renders(relative):
    committed = (ROOT / relative).read_text()
    assert committed == OUTPUTS[relative](), f"{relative} is out of date: run `make settings-docs`"


def test_the_reference_names_every_variable_of_the_list():
    page = (ROOT / "docs" / "reference" / "configuration.md").read_text()
    missing = [entry.name for entry in SETTINGS if f"`{entry.name}" not in page]
    assert missing == []


def test_the_deploy_examples_name_every_variable_of_their_processes():
    site = (ROOT / "deploy" / "latency.env.example").read_text()
    region = (ROOT / "deploy" / "region.env.example").read_text()
    missing = [
        entry.name
        for entry in SETTINGS
        if ("worker" in entry.readers and f"{entry.name}" not in region)
        or (set(entry.readers) - {"worker"} and f"{entry.name}" not in site)
    ]
    assert missing == []
