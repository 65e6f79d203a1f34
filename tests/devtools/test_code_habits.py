"""The code keeps its habits: ruff (lint and format) and mypy pass, as
configured in pyproject.toml. `make check` runs the same three commands before
the suite; here a failure is a test failure carrying the tool's own output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # The venv's tools, from the repository root, so pyproject.toml is the configuration.
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.parametrize(
    "command",
    [("ruff", "check", "."), ("ruff", "format", "--check", "."), ("mypy",)],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_the_code_passes_the_linters_and_the_type_check(command: tuple[str, ...]) -> None:
    done = _run(*command)
    assert done.returncode == 0, f"`{' '.join(command)}` failed:\n{done.stdout}\n{done.stderr}"
