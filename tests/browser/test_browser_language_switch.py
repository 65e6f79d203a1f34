"""In headless Chromium: choosing 简体中文 in the header's switch turns the
overview Chinese, headings and the Plotly charts' own titles alike, under
the Content-Security-Policy and without a console error."""

from __future__ import annotations

import pytest

from devtools.harness import login
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import (
    CHARTS_DRAWN_JS,
    COLLECT_VIOLATIONS,
    PASSWORD,
    site,  # noqa: F401 (a fixture, used by name)
    visit,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

AXIS_TITLE_JS = """() => {
  const title = document.querySelector('#histograms .g-xtitle text');
  return title ? title.textContent : null;
}"""


def test_choosing_chinese_in_the_header_turns_the_overview_and_its_charts_chinese(site, asgi_server, browser_page):  # noqa: F811
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    origin = asgi_server.origin
    login(page, origin, "boss", PASSWORD)
    problems = visit(page, f"{origin}/?target={site['target'].id}", ready=CHARTS_DRAWN_JS)
    assert page.evaluate("() => document.documentElement.lang") == "en"
    assert "fastest at the top" in page.evaluate(AXIS_TITLE_JS)

    page.select_option(".language-switch select[name=language]", "zh-hans")
    with page.expect_navigation():
        page.click(".language-switch button[type=submit]")
    page.wait_for_function("() => document.documentElement.lang === 'zh-hans'", timeout=20_000)
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=20_000)
    page.wait_for_load_state("networkidle")
    snap(page, "overview-zh-hans")

    # Back on the same view (the switch's "next"), now in Chinese.
    assert f"target={site['target'].id}" in page.url
    headings = page.locator("h2").all_text_contents()
    assert "分布" in headings and "随时间变化" in headings and "区域 × 目标" in headings
    assert page.locator("#region-target-table th").first.text_content() == "区域"
    # The figure's text is the server's, in the reader's language.
    assert page.evaluate(AXIS_TITLE_JS) == "TTFT (ms) · 最快的在最上方"
    # Plotly's own words (its modebar, its date formats) through its zh-CN locale.
    assert page.evaluate("() => document.getElementById('histograms')._context.locale") == "zh-CN"
    assert page.locator("#live-indicator").text_content() in ("实时", "离线")

    violations = page.evaluate("() => window.__cspViolations || null")
    assert violations is not None, "the violation listener did not run"
    problems += [f"after the switch: {v}" for v in violations]
    problems += [f"after the switch: console: {e}" for e in page.recorder.console_errors]
    assert problems == [], "\n".join(problems)
    assert page.recorder.page_errors == [], page.recorder.page_errors
