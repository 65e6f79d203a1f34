"""static/atlas-rum.js runs under the site's own Content-Security-Policy (scripts and connections from 'self'
only, no inline code, no eval): on one of the site's pages, a script tag for it with a source's browser key (the
source allows the site's own origin) defines AtlasRUM, and a call's beacon is sent and stored, with no policy
violation reported."""

from __future__ import annotations

import pytest

from devtools.harness import outside_browser_loop, wait_until
from probes.models import Observation
from tests.factories import IngestSourceFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

COLLECT_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`);
});
"""

# What a template of ours would hold: <script src="/static/atlas-rum.js" data-key=... data-target=...>.
ADD_SCRIPT = """(key) => new Promise((resolve, reject) => {
  const script = document.createElement('script');
  script.src = '/static/atlas-rum.js';
  script.dataset.key = key;
  script.dataset.target = 'nonesuch';
  script.onload = resolve;
  script.onerror = () => reject(new Error('atlas-rum.js did not load'));
  document.head.appendChild(script);
})"""


def test_the_script_and_its_beacon_pass_the_sites_policy(asgi_server, browser_page):
    page = browser_page
    source = outside_browser_loop(IngestSourceFactory, allowed_origins=[asgi_server.origin])
    page.add_init_script(COLLECT_VIOLATIONS)

    response = page.goto(asgi_server.origin + "/accounts/login/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    page.evaluate(ADD_SCRIPT, source.browser_key)
    with page.expect_response(lambda r: r.url.endswith("/rum/v1/beacon")) as beacon:
        page.evaluate(
            """() => { const call = AtlasRUM.start('login page'); call.firstToken(); call.end({tokens: 3}); }"""
        )

    assert beacon.value.status == 204
    wait_until(page, lambda: outside_browser_loop(Observation.objects.exists), 15, "the beacon's observation")
    assert page.evaluate("window.__cspViolations") == []
    row = outside_browser_loop(Observation.objects.get)
    assert (row.kind, row.service, row.output_tokens, row.target_id) == ("beacon", "login page", 3, None)
