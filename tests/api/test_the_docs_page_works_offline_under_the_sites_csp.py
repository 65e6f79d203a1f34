"""/api/v1/docs/ in headless Chromium: Swagger UI comes from our own static files (no request leaves the site),
runs under the site's Content-Security-Policy without a violation, lists every operation of the schema, and
calls the API with the signed-in session: a GET answers 200, and a POST passes the CSRF check (its example body
is refused 400 by validation, not 403 by CSRF)."""

from __future__ import annotations

import pytest

from devtools.harness import login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-77"
COLLECT_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}`);
});
"""
STATUS = "#operations-{tag}-{op} .live-responses-table .response .response-col_status"


def execute(page, tag: str, op: str) -> str:
    """Open an operation, press "Try it out" and "Execute"; the status code Swagger UI shows."""
    block = page.locator(f"#operations-{tag}-{op}")
    block.locator(".opblock-summary").first.click()
    block.locator("button.try-out__btn").click()
    block.locator("button.execute").click()
    status = page.locator(STATUS.format(tag=tag, op=op)).first
    status.wait_for(timeout=20_000)
    return status.inner_text().strip()


@pytest.fixture
def boss(transactional_db):
    # Before the browser starts: Playwright's event loop would refuse the ORM.
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)


def test_swagger_ui_draws_and_calls_the_api_with_the_session(boss, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    origin = asgi_server.origin

    page.goto(f"{origin}/api/v1/docs/")
    assert "/accounts/login/" in page.url  # a page for people: sign in first
    login(page, origin, "boss", PASSWORD)
    response = page.goto(f"{origin}/api/v1/docs/")
    assert response is not None and response.status == 200
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "'unsafe-eval'" not in policy
    page.locator(".opblock").nth(20).wait_for(timeout=30_000)
    assert page.locator(".opblock").count() >= 25

    assert execute(page, "regions", "regions_list") == "200"
    assert execute(page, "regions", "regions_create") == "400"

    page.wait_for_load_state("networkidle")
    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.foreign(origin) == []
    assert any(u.startswith(f"{origin}/static/drf_spectacular_sidecar/") for u in page.recorder.urls)
    # The console's one complaint is the refused POST the test made.
    unexpected = [e for e in page.recorder.console_errors if "status of 400" not in e]
    assert page.recorder.page_errors == [] and unexpected == [], page.recorder.report()
