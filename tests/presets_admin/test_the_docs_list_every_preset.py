"""The "Provider presets" table of docs/guides/targets.md has a row for every preset of PROVIDER_LIST, with its
style, and says that none was called live: the table is written by hand, and this keeps it from drifting."""

import re
from pathlib import Path

from probes.engine.providers import PROVIDER_LIST

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "targets.md"


def preset_rows() -> dict[str, list[str]]:
    text = PAGE.read_text()
    section = text.split("## Provider presets", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `([a-z0-9-]+)`", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in line.strip("|").split("|")]
    return rows


def test_the_docs_list_every_preset_with_its_style():
    rows = preset_rows()
    assert set(rows) == {provider.key for provider in PROVIDER_LIST}
    for provider in PROVIDER_LIST:
        assert rows[provider.key][1] == provider.style, provider.key
        assert rows[provider.key][-1].startswith("mock"), provider.key


def test_the_docs_say_no_preset_was_called_live():
    section = PAGE.read_text().split("## Provider presets", 1)[1].split("\n#", 1)[0]
    assert "None of these presets was called live from here" in section
