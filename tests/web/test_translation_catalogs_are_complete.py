"""Every string of the catalogs is translated, none is left fuzzy, and the
compiled .mo files (committed: a fresh machine may have no msgfmt) say
what the .po files say."""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

import pytest

LC_MESSAGES = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES"
DOMAINS = ("django", "djangojs")


def entries(po: Path) -> list[dict]:
    """The .po's entries: msgctxt (a word with two meanings: a theme's "dark" is not a region's), msgid,
    msgid_plural, msgstr(s) and flags (a reader of the format's subset makemessages writes: no obsolete entries
    here)."""
    found = []
    text = po.read_text(encoding="utf-8")
    for block in re.split(r"\n\s*\n", text):
        fields: dict[str, list[str]] = {}
        flags: list[str] = []
        key = None
        for line in block.splitlines():
            if line.startswith("#,"):
                flags += [flag.strip() for flag in line[2:].split(",")]
            elif line.startswith("#~"):
                raise AssertionError(f"obsolete entry left in {po.name}: {line}")
            elif match := re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?) (".*")$', line):
                key = match.group(1)
                fields[key] = [ast.literal_eval(match.group(2))]
            elif line.startswith('"') and key:
                fields[key].append(ast.literal_eval(line))
        if "msgid" in fields:
            found.append({"flags": flags, **{k: "".join(v) for k, v in fields.items()}})
    return found


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_message_has_a_chinese_translation_and_none_is_fuzzy(domain):
    items = [e for e in entries(LC_MESSAGES / f"{domain}.po") if e["msgid"]]
    assert items, f"{domain}.po is empty"
    untranslated = [e["msgid"] for e in items if not (e.get("msgstr") or e.get("msgstr[0]"))]
    fuzzy = [e["msgid"] for e in items if "fuzzy" in e["flags"]]
    assert untranslated == []
    assert fuzzy == []


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_compiled_catalog_says_what_the_po_says(domain):
    with (LC_MESSAGES / f"{domain}.mo").open("rb") as mo:
        catalog = gettext.GNUTranslations(mo)
    stale = []
    for entry in entries(LC_MESSAGES / f"{domain}.po"):
        if not entry["msgid"]:
            continue
        if "msgid_plural" in entry:
            got = catalog.ngettext(entry["msgid"], entry["msgid_plural"], 1)
            wanted = entry["msgstr[0]"]
        elif "msgctxt" in entry:
            got, wanted = catalog.pgettext(entry["msgctxt"], entry["msgid"]), entry["msgstr"]
        else:
            got, wanted = catalog.gettext(entry["msgid"]), entry["msgstr"]
        if got != wanted:
            stale.append(entry["msgid"])
    assert stale == [], "run manage.py compilemessages and commit the .mo files"
