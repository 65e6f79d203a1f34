"""The [worker] extra is what a region host installs instead of the base list, never something else: every entry is
in the base list with the same range, so the central site (which runs the same engine for its checks) and a region
host accept the same releases."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement

from tests.support import ROOT


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_every_worker_requirement_is_a_site_requirement_with_the_same_range():
    project = _project()
    site = {Requirement(line).name.lower(): Requirement(line) for line in project["dependencies"]}
    for line in project["optional-dependencies"]["worker"]:
        wanted = Requirement(line)
        assert wanted.name.lower() in site, f"{wanted.name} is in [worker] but not in the base list"
        assert str(site[wanted.name.lower()]) == str(wanted), f"{wanted.name}: {site[wanted.name.lower()]} != {wanted}"


def test_the_worker_list_names_neither_django_nor_a_database_driver():
    names = {Requirement(line).name.lower() for line in _project()["optional-dependencies"]["worker"]}
    assert not names & {"django", "psycopg", "psycopg-pool", "psycopg2", "channels", "numpy"}
