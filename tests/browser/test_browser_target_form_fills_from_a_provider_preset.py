"""In real Chromium, under the site's CSP: picking "Azure OpenAI" in the target add form fills the style, the URL
template and the key variable, and shows a model as an example; picking another preset replaces what the first
one filled, but not a URL the user typed."""

from __future__ import annotations

import pytest

from devtools.harness import login
from probes.engine.providers import PROVIDERS
from tests.browser.conftest import snap
from tests.browser.test_browser_content_security_policy import COLLECT_VIOLATIONS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "correct-horse-battery-staple-77"
TYPED_URL = "https://llm-gateway.example.com/deepseek/chat/completions"


@pytest.fixture
def boss(transactional_db):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)


def fields(page) -> dict[str, str]:
    return {name: page.input_value(f"#id_{name}") for name in ("api_style", "url", "api_key_env", "http_version")}


def test_picking_a_preset_fills_the_form_and_keeps_what_the_user_typed(boss, asgi_server, browser_page):
    page = browser_page
    page.context.add_init_script(COLLECT_VIOLATIONS)
    login(page, asgi_server.origin, "boss", PASSWORD)
    page.goto(f"{asgi_server.origin}/admin/probes/target/add/")

    # A style chosen by hand first: the preset's own style must replace it.
    page.select_option("#id_api_style", "http")
    page.select_option("#id_provider", "azure-openai")
    azure = PROVIDERS["azure-openai"]
    assert fields(page) == {
        "api_style": "openai",
        "url": azure.url_template,
        "api_key_env": "AZURE_OPENAI_API_KEY",
        "http_version": "1.1",
    }
    assert page.get_attribute("#id_model", "placeholder") == "e.g. gpt-4o-mini"
    snap(page, "azure")

    # Everything Azure filled is replaced by the next preset's values.
    page.select_option("#id_provider", "anthropic")
    assert fields(page) == {
        "api_style": "anthropic",
        "url": "https://api.anthropic.com/v1/messages",
        "api_key_env": "ANTHROPIC_API_KEY",
        "http_version": "1.1",
    }

    # A URL the user typed stays; the fields a preset filled still follow the preset.
    page.fill("#id_url", TYPED_URL)
    page.select_option("#id_provider", "deepseek")
    assert fields(page) == {
        "api_style": "openai",
        "url": TYPED_URL,
        "api_key_env": "DEEPSEEK_API_KEY",
        "http_version": "1.1",
    }
    assert page.get_attribute("#id_model", "placeholder") == "e.g. deepseek-reasoner"

    # Back to custom: nothing is emptied, the example goes.
    page.select_option("#id_provider", "")
    assert fields(page)["url"] == TYPED_URL
    assert page.get_attribute("#id_model", "placeholder") in (None, "")
    snap(page, "custom-again")

    assert page.evaluate("() => window.__cspViolations") == []
    assert page.recorder.console_errors == [] and page.recorder.page_errors == []
