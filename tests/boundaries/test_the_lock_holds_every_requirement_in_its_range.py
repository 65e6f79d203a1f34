"""requirements/*.txt (`make lock`) hold a version of every package pyproject.toml names, inside its range: a
dependency added or moved without `make lock` fails here, not on an install that silently skips it (make installs
the lock, then the package with --no-deps)."""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", re.MULTILINE)


def _locked(name: str) -> dict[str, str]:
    text = (ROOT / "requirements" / name).read_text()
    return {canonicalize_name(m[1]): m[2] for m in PIN.finditer(text)}


def _lists() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return {
        "dev.txt": project["dependencies"] + extras["worker"] + extras["dev"],
        "site.txt": project["dependencies"],
        "worker.txt": extras["worker"],
    }


@pytest.mark.parametrize("lock", ["dev.txt", "site.txt", "worker.txt"])
def test_each_lock_holds_each_requirement_of_its_list_in_range(lock):
    locked = _locked(lock)
    for line in _lists()[lock]:
        wanted = Requirement(line)
        name = canonicalize_name(wanted.name)
        assert name in locked, f"{wanted.name} is not in requirements/{lock}: run `make lock`"
        assert wanted.specifier.contains(locked[name], prereleases=True), (
            f"requirements/{lock} holds {wanted.name}=={locked[name]}, outside {wanted.specifier}: run `make lock`"
        )


@pytest.mark.parametrize("lock", ["site.txt", "worker.txt"])
def test_the_site_and_the_worker_lock_the_versions_the_suite_runs(lock):
    dev = _locked("dev.txt")
    assert {name: version for name, version in _locked(lock).items() if dev.get(name) != version} == {}


def test_every_locked_version_carries_a_hash():
    for lock in ("dev.txt", "site.txt", "worker.txt"):
        entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements" / lock).read_text())
        unhashed = [entry.split()[0] for entry in entries if PIN.match(entry) and "--hash=sha256:" not in entry]
        assert unhashed == [], f"requirements/{lock}"


def test_the_worker_lock_holds_no_django_and_no_database_driver():
    assert not set(_locked("worker.txt")) & {"django", "psycopg", "psycopg-binary", "psycopg-pool", "asgiref"}
