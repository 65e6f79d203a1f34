"""The trust model (docs/architecture/trust-model.md) backs each sentence with a test: every test it names must
exist, or a renamed or deleted test would leave a promise nobody checks."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"`(?P<path>[a-z_0-9]+/test_[a-z_0-9]+\.py)(?:::(?P<test>[a-z_0-9]+))?`")


def trust_model() -> str:
    text = (ROOT / "docs" / "architecture" / "trust-model.md").read_text()
    start = text.index("## Trust model")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_trust_model_names_tests_for_every_party():
    section = trust_model()
    for party in ("A stolen region host", "A broker password", "A target editor", "A staff user", "Anyone on"):
        assert party in section
    assert len(NAMED.findall(section)) >= 30


def test_every_test_the_trust_model_names_exists():
    missing = []
    for match in NAMED.finditer(trust_model()):
        path = ROOT / "tests" / match["path"]
        if not path.is_file():
            missing.append(match["path"])
        elif match["test"] and not re.search(rf"^(async )?def {match['test']}\(", path.read_text(), re.M):
            missing.append(f"{match['path']}::{match['test']}")
    assert missing == []
