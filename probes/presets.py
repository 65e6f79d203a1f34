"""What a provider preset asks of a target, checked in one place.

Target.clean() calls preset_errors(), so the admin form and anything else that saves a target through
full_clean() refuse the same things with the same words; validate_http_url() asks placeholder_error() first, so a
URL template copied as is is named for what it is rather than as a bad host; `probe --provider` asks
style_problem() the same question of its --style. The presets themselves are data, in probes.engine.providers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlsplit

from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from probes.engine.providers import AZURE_KEY, BEARER, PROVIDER_LIST, Provider, provider_for

PLACEHOLDER = re.compile(r"\{([^{}/?#]*)\}")

# The header each style's plan() sends the key in (probes/engine/styles/*.py; the openai style moves it to
# api-key for Azure). tests/presets_admin checks the two agree, style by style and preset by preset.
STYLE_KEY_HEADER = {
    "openai": BEARER,
    "responses": BEARER,
    "anthropic": "x-api-key",
    "gemini": "x-goog-api-key",
    "http": BEARER,
}
# A self-hosted vLLM takes a key only when started with --api-key: its preset names the usual variable, but an
# empty one is a server without a key, not a mistake.
KEY_OPTIONAL = frozenset({"vllm"})

AZURE_DEPLOYMENT_PATH = re.compile(r"/openai/deployments/[^/]+/chat/completions/?")
AZURE_V1_PATH = re.compile(r"/openai/v1/chat/completions/?")


def placeholders_in(url: str) -> list[str]:
    return PLACEHOLDER.findall(url or "")


def placeholder_error(url: str) -> ValidationError | None:
    """A preset's {placeholder} left in the URL: named, so the user knows what to write there."""
    names = placeholders_in(url)
    if not names:
        return None
    return ValidationError(
        gettext(
            "Replace %(names)s in the URL with your own value: a preset's URL marks in braces the parts only you know."
        ),
        code="url_placeholder",
        params={"names": ", ".join(f"{{{name}}}" for name in names)},
    )


def key_header(style: str, provider: Provider | None) -> str:
    """The header the engine sends this target's key in."""
    if provider is not None and provider.auth_header == AZURE_KEY and style == "openai":
        return AZURE_KEY
    return STYLE_KEY_HEADER.get(style, BEARER)


def key_headers(style: str, provider: Provider | None) -> frozenset[str]:
    """The headers that carry a key for this target: the engine's, and for Azure also Authorization, where Azure
    reads an Entra ID token (two credentials on one call, and no telling which one was used)."""
    header = key_header(style, provider)
    return frozenset({header, BEARER}) if header == AZURE_KEY else frozenset({header})


def style_problem(provider: Provider, style: str) -> str | None:
    if style == provider.style:
        return None
    from probes.models import STYLE_LABELS  # the labels live with the model's choices

    message: str = gettext(
        '%(provider)s speaks the "%(style)s" style (%(label)s): choose it, or the custom preset for another style.'
    ) % {"provider": provider.label, "style": provider.style, "label": STYLE_LABELS.get(provider.style, "")}
    return message


def azure_url_problem(url: str) -> str | None:
    parts = urlsplit(url)
    message: str
    if parts.scheme != "https":
        message = gettext("Azure OpenAI is served over https:// only.")
        return message
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if AZURE_DEPLOYMENT_PATH.fullmatch(parts.path):
        if not query.get("api-version"):
            message = gettext(
                "An Azure OpenAI deployment URL needs its api-version query parameter, e.g. ?api-version=2024-10-21."
            )
            return message
        return None
    if AZURE_V1_PATH.fullmatch(parts.path):
        return None
    message = gettext(
        "An Azure OpenAI URL is https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT/chat/completions"
        "?api-version=VERSION, or the v1 form https://RESOURCE.openai.azure.com/openai/v1/chat/completions."
    )
    return message


def preset_errors(
    *,
    provider_key: str,
    style: str,
    url: str,
    api_key_env: str,
    headers: Mapping[str, str],
    url_checked: bool,
) -> dict[str, str]:
    """The preset's refusals, by field. url_checked: the URL passed validate_http_url (else its own error
    already speaks for it, and the preset's URL rules are not asked)."""
    provider = provider_for(provider_key)
    if provider is None:
        return {}
    errors: dict[str, str] = {}
    problem = style_problem(provider, style)
    if problem:
        errors["api_style"] = problem
    if url_checked and provider.auth_header == AZURE_KEY:
        problem = azure_url_problem(url)
        if problem:
            errors["url"] = problem
    carriers = key_headers(style, provider)
    sent = [name for name in headers if name.lower() in carriers]
    if api_key_env and sent:
        errors["headers"] = gettext(
            'The key named in "API key environment variable" (%(env)s) is sent in the %(header)s header already: '
            'remove "%(name)s" from the headers, or empty that field.'
        ) % {"env": api_key_env, "header": key_header(style, provider), "name": sent[0]}
    elif provider.api_key_env and provider.key not in KEY_OPTIONAL and not api_key_env and not sent:
        errors["api_key_env"] = gettext(
            "%(provider)s needs a key: name the environment variable that holds it on the workers, e.g. %(env)s."
        ) % {"provider": provider.label, "env": provider.api_key_env}
    return errors


# The target's fields a preset fills in the admin form.
PRESET_FIELDS = ("api_style", "url", "api_key_env", "http_version")


def admin_fill_data() -> dict[str, dict[str, str]]:
    """What choosing each preset fills in the target form (read by static/js/provider-presets.js), and the model
    name shown as an example in the empty model field."""
    return {
        provider.key: {
            "api_style": provider.style,
            "url": provider.url_template,
            "api_key_env": provider.api_key_env,
            "http_version": provider.http_version,
            "model_placeholder": gettext("e.g. %(model)s") % {"model": provider.model_example}
            if provider.model_example
            else "",
        }
        for provider in PROVIDER_LIST
    }
