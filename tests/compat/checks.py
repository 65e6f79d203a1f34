"""What every compat module's test checks: the release installed is accepted, a release past the range and one
before it are refused with a message naming the library, the version and the range."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from importlib import metadata

import pytest

from probes.compat import UnsupportedVersion, require
from tests.support import ROOT


def check_compat_module(module_name: str, distribution: str, past: str, before: str) -> None:
    module = importlib.import_module(module_name)
    assert metadata.version(distribution) == module.VERSION
    for found in (past, before):
        with pytest.raises(UnsupportedVersion) as refused:
            require(distribution, module.MINIMUM, module.BELOW, module=module_name, found=found)
        message = str(refused.value)
        assert f"{distribution} {found} is installed" in message
        assert f"{distribution} >={module.MINIMUM},<{module.BELOW}" in message
        assert module_name in message


def check_import_refused(module_name: str, distribution: str, version: str, tmp_path) -> None:
    """Importing the module where the distribution's metadata says `version` stops at the check: a fresh interpreter
    finds a stand-in dist-info first on its path, the library itself unchanged."""
    info = tmp_path / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")
    done = subprocess.run(
        [sys.executable, "-c", f"import {module_name}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("probes.compat.UnsupportedVersion: ")
    assert f"{distribution} {version} is installed" in last
