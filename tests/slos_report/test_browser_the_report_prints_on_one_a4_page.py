"""Printed from Chromium (the print stylesheet, media print), an objective's SLA report with incidents and
silences is one A4 page, without the site's header, footer, form or buttons."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from devtools.harness import login
from tests.factories import IncidentFactory, SilenceFactory
from tests.slos_pages.conftest import make_known, this_hour

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
PASSWORD = "correct-horse-battery-staple-77"
A4_POINTS = (595, 842)  # 210 x 297 mm


@pytest.fixture
def objective(transactional_db, django_user_model):
    known = make_known()
    end = this_hour()
    IncidentFactory(target=known.targets[0], regions=[known.regions[0]], started_at=end - timedelta(hours=4))
    SilenceFactory(target=known.targets[1], starts_at=end - timedelta(hours=9), ends_at=end - timedelta(hours=8))
    django_user_model.objects.create_user("printer", "printer@example.org", PASSWORD)
    return known.objective


def test_the_report_prints_on_one_a4_page_without_the_sites_controls(objective, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    login(page, origin, "printer", PASSWORD)
    response = page.goto(f"{origin}/slos/{objective.id}/report")
    assert response is not None and response.status == 200
    page.emulate_media(media="print")
    for hidden in (".site-header", ".site-footer", "#report-form", "#print-report", "#report-csv"):
        assert not page.locator(hidden).is_visible(), hidden
    assert page.locator("#report-rows").is_visible() and page.locator("#report-incidents").is_visible()
    pdf = page.pdf(prefer_css_page_size=True, print_background=False)
    pages = re.findall(rb"/Type\s*/Page(?!s)", pdf)
    assert len(pages) == 1, f"{len(pages)} pages"
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    assert box and tuple(round(float(v)) for v in box.groups()) == A4_POINTS
