"""The documentation site builds with `mkdocs build --strict` (what `make docs` runs): a broken link, a missing
anchor or a page left out of the navigation is a warning, and a warning fails the build and this test. The built
pages ask no other host for a font, a stylesheet or a script, so the site works offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A src or href that leaves the site for a font, stylesheet or script (links a reader follows are fine).
FETCHED_FROM_ELSEWHERE = re.compile(
    r"""<(?:script|link|img)\b[^>]*\b(?:src|href)=["'](?:https?:)?//|fonts\.googleapis|fonts\.gstatic""", re.I
)


def test_the_docs_build_strictly_and_fetch_nothing_from_another_host(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"

    pages = sorted(site.rglob("*.html"))
    assert (site / "index.html") in pages and (site / "benchmarks.html") in pages
    fetching = {str(p.relative_to(site)): m[0] for p in pages if (m := FETCHED_FROM_ELSEWHERE.search(p.read_text()))}
    assert fetching == {}
