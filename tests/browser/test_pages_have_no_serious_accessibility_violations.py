"""axe-core finds no serious or critical accessibility violation on any page (login, overview, region, target,
admin index, incidents, an incident, the objectives, an objective and its SLA report), at 1440 px and at 390 px
wide, in the light look and the dark one (the
system's colour scheme dark, and dark chosen with the header's toggle on a light system), with data on each so
the charts and tables are drawn. axe-core runs inside the page (axe-playwright-python ships its script; nothing
is fetched); every rule it has is run, and the test fails on each violation of impact "serious" or "critical",
listed with its rule, help link and the elements it names."""

from __future__ import annotations

import pytest

from devtools.harness import login
from tests.browser.pages import PASSWORD, USERNAME, Page, make_site, open_page

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

BLOCKING = ("serious", "critical")
# (width, the system's colour scheme, the toggle's choice): every width in both looks, and dark chosen by hand
# once (the stored choice, not the system, makes the page dark: the admin reads the same choice).
RUNS = (
    (1440, "light", None),
    (390, "light", None),
    (1440, "dark", None),
    (390, "dark", None),
    (1440, "light", "dark"),
)


@pytest.fixture
def site_pages(transactional_db):
    return make_site()


def serious_violations(page, name: str) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] not in BLOCKING:
            continue
        nodes = "\n".join(
            f"      {' '.join(node['target']) if isinstance(node['target'], list) else node['target']}: "
            f"{(node.get('failureSummary') or '').splitlines()[-1].strip() if node.get('failureSummary') else ''}"
            for node in violation["nodes"][:8]
        )
        more = f"\n      … and {len(violation['nodes']) - 8} more" if len(violation["nodes"]) > 8 else ""
        found.append(
            f"{name}: {violation['id']} ({violation['impact']}): {violation['help']} <{violation['helpUrl']}>\n"
            f"{nodes}{more}"
        )
    return found


def test_no_page_has_a_serious_or_critical_axe_violation(site_pages, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    found = []

    # Wide and phone-sized: some rules (a table box that scrolls must take focus) apply only when it overflows.
    for width, system, chosen in RUNS:
        page.set_viewport_size({"width": width, "height": 900})
        page.emulate_media(color_scheme=system)
        page.context.clear_cookies()
        open_page(page, origin, Page("login", "/accounts/login/"))
        # The header's toggle, as a reader would use it; "as the system" otherwise (left from the run before).
        page.select_option("#theme-choice", chosen or "auto")
        look = f"{width} px, {chosen or system}{' (chosen)' if chosen else ''}"
        assert page.evaluate("() => window.AtlasTheme.scheme()") == (chosen or system), look
        found += serious_violations(page, f"login at {look}")
        login(page, origin, USERNAME, PASSWORD)
        for site_page in site_pages:
            open_page(page, origin, site_page)
            found += serious_violations(page, f"{site_page.name} at {look}")

    assert not found, "axe-core found serious or critical violations:\n" + "\n".join(found)
