"""The target add form opens with "Provider preset", lists every preset, and renders beside it, as JSON
(the CSP allows no inline script), what each preset fills, for the static script it loads."""

import json
import re

from django.urls import reverse

from probes.engine.providers import PROVIDER_LIST

ADD = "admin:probes_target_add"


def presets_json(html: str) -> dict:
    match = re.search(r'<script id="provider-presets" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the presets' data is not on the page"
    return json.loads(match.group(1))


def test_the_target_form_offers_the_presets_first(admin_client):
    response = admin_client.get(reverse(ADD))
    form = response.context["adminform"]
    first_fieldset = form.fieldsets[0][1]["fields"]
    assert first_fieldset[0] == "provider"
    html = response.content.decode()
    assert "Provider preset" in html
    for provider in PROVIDER_LIST:
        assert f'<option value="{provider.key}">{provider.label}</option>' in html
    assert re.search(r'<script src="[^"]*js/provider-presets\.js"', html)
    # No inline script: the only <script> without src is the JSON data.
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", html)
    assert all('type="application/json"' in attrs for attrs in inline), inline


def test_the_page_carries_what_each_preset_fills(admin_client):
    data = presets_json(admin_client.get(reverse(ADD)).content.decode())
    assert data["defaults"] == {"api_style": "openai", "url": "", "api_key_env": "", "http_version": "1.1"}
    azure = data["presets"]["azure-openai"]
    assert azure["api_style"] == "openai"
    assert azure["url"].startswith("https://{resource}.openai.azure.com/openai/deployments/{deployment}/")
    assert azure["api_key_env"] == "AZURE_OPENAI_API_KEY"
    assert azure["http_version"] == "1.1"
    assert data["presets"]["anthropic"]["api_style"] == "anthropic"
    assert data["presets"]["llamacpp"]["api_key_env"] == ""
    assert data["presets"]["deepseek"]["model_placeholder"] == "e.g. deepseek-reasoner"
    assert set(data["presets"]) == {provider.key for provider in PROVIDER_LIST}
