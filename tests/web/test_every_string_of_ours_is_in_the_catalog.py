"""Every translatable string in our code is in the Chinese catalogs: makemessages, run over a copy of the
project's code and catalogs, finds no msgid the committed catalogs lack. (A new string wrapped in gettext but
never added to the catalog would show in English on the Chinese pages; `make messages` adds it.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web.test_translation_catalogs_are_complete import DOMAINS, LC_MESSAGES, entries

ROOT = Path(__file__).resolve().parents[2]
# What makemessages reads (the rest of the tree holds no string of ours), copied so that the committed
# catalogs stay untouched: makemessages rewrites the catalogs of the tree it runs in.
SOURCES = ["latency", "probes", "templates", "static", "locale"]
IGNORES = ["static/vendor", "*/__pycache__"]
EXTRACT = """
import sys, django
from django.core.management import call_command
django.setup()
for domain in ("django", "djangojs"):
    call_command("makemessages", locale=["zh_Hans"], domain=domain, ignore_patterns=sys.argv[1:], verbosity=0)
"""


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="makemessages needs GNU gettext's xgettext")
def test_makemessages_finds_no_string_the_chinese_catalogs_lack(tmp_path):
    for name in SOURCES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("vendor", "__pycache__"))
    shutil.copy(ROOT / "manage.py", tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", EXTRACT, *IGNORES],
        cwd=tmp_path,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "latency.settings", "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for domain in DOMAINS:
        # With its context: a theme's "dark" and a region's are two entries.
        committed = {(e.get("msgctxt"), e["msgid"]) for e in entries(LC_MESSAGES / f"{domain}.po")}
        extracted = entries(tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po")
        missing = [e["msgid"] for e in extracted if e["msgid"] and (e.get("msgctxt"), e["msgid"]) not in committed]
        untranslated = [e["msgid"] for e in extracted if e["msgid"] and not e.get("msgstr", e.get("msgstr[0]"))]
        assert not missing, f"{domain}.po lacks {missing}: run `make messages` and translate them"
        assert not untranslated, f"{domain}.po has untranslated {untranslated}"
