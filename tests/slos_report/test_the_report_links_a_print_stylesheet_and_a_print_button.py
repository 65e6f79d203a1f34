"""The report page links its print stylesheet (media print: A4, without the site's header and controls) and a
print button whose script is a static file (no inline script)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.slos_pages.conftest import attribute, element

pytestmark = pytest.mark.django_db
STATIC = Path(settings.BASE_DIR) / "static"


def test_the_print_stylesheet_and_button_are_linked(signed_in, known):
    html = signed_in.get(f"/slos/{known.objective.id}/report?period=2026-11").content.decode()
    link = element(html + "</link>", "link", 'id="slo-print-css"')
    assert attribute(link, "link", "media") == "print"
    assert attribute(link, "link", "href").endswith("css/slo-print.css")
    assert 'id="print-report"' in html
    assert re.search(r'<script src="[^"]*js/print\.js"></script>', html)
    assert not re.search(r"<script>(?!</script>)", html), "an inline script"
    css = (STATIC / "css" / "slo-print.css").read_text()
    assert re.search(r"@page\s*{[^}]*size:\s*A4", css)
    assert ".site-header" in css and "#report-form" in css and "break-inside: avoid" in css
