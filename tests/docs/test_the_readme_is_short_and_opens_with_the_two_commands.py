"""The README stays a front page: at most 200 lines, `make demo` and `make test` its first two commands, and every
link it has into the repository leads to a file that exists (the rest lives in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_has_at_most_200_lines():
    assert len(README.splitlines()) <= 200


def test_the_first_two_commands_are_make_demo_and_make_test():
    first_block = README.split("```", 2)[1]
    assert first_block.strip().splitlines() == ["make demo", "make test"]


def test_every_link_into_the_repository_leads_to_a_file():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert local and [t for t in local if not (ROOT / t).exists()] == []
