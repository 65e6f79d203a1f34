"""Every process of the site (web, workers, manage.py) imports the latency package first, which keeps numpy from
asking for transparent huge pages: on a database host the first large array of a new process could wait for the
kernel to compact memory (latency/__init__.py). An operator's own NUMPY_MADVISE_HUGEPAGE still wins. Checked in a
fresh interpreter, since numpy reads the variable once, when first imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import ROOT

PROBE = (
    "import latency, numpy; "
    # numpy's own reading of the variable (private, but the only way to ask it); the test fails loudly if it moves.
    "print(numpy._core.multiarray._get_madvise_hugepage())"
)


def _huge_pages(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if env_value is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = env_value
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_numpy_takes_no_huge_pages_once_the_site_is_imported() -> None:
    assert _huge_pages(None) == "False"


@pytest.mark.parametrize(("setting", "expected"), [("1", "True"), ("0", "False")])
def test_the_operators_own_setting_wins(setting: str, expected: str) -> None:
    assert _huge_pages(setting) == expected
