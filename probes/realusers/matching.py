"""Which configured target a real user's call went to: by host and model.

A call matches a target when its host is the host of the target's URL and its model is the target's model
(or a dated version of it: "gpt-4o-2024-08-06" for "gpt-4o"). Some instrumentations send no host at all
(opentelemetry-instrumentation-openai-v2 with openai 3.x): such a call matches by model alone when exactly one
target has that model and, when the call names its provider, an API style that provider speaks. Everything
else stays under "other providers", kept by host and model."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlsplit

# gen_ai.provider.name (and the older gen_ai.system) values, to the api_styles of targets that serve them:
# OpenAI serves both chat completions and the Responses API.
_OPENAI = ("openai", "responses")
PROVIDER_STYLES = {
    "openai": _OPENAI,
    "azure.ai.openai": _OPENAI,
    "az.ai.openai": _OPENAI,
    "anthropic": ("anthropic",),
    "gcp.gemini": ("gemini",),
    "gcp.vertex_ai": ("gemini",),
    "gemini": ("gemini",),
    "vertex_ai": ("gemini",),
}

# Targets change when an admin edits one; a web process re-reads them at most this often.
_TTL_S = 10.0
_cache: dict[str, tuple[float, list[tuple[int, str, str, str]]]] = {}


def _targets() -> list[tuple[int, str, str, str]]:
    now = time.monotonic()
    cached = _cache.get("targets")
    if cached is None or now - cached[0] > _TTL_S:
        from probes.models import Target

        rows = []
        for tid, url, model, style in Target.objects.values_list("id", "url", "model", "api_style"):
            host = (urlsplit(url).hostname or "").lower()
            rows.append((tid, host, (model or "").lower(), style))
        cached = _cache["targets"] = (now, rows)
    return cached[1]


def forget() -> None:
    """Drop the cached targets (tests, and the admin after saving a target)."""
    _cache.clear()


def _model_matches(target_model: str, model: str) -> bool:
    return bool(target_model) and (model == target_model or model.startswith(target_model + "-"))


def matcher() -> Callable[[str, str, str], int | None]:
    targets = _targets()
    memo: dict[tuple[str, str, str], int | None] = {}

    def match(host: str, model: str, provider: str = "") -> int | None:
        key = (host.lower(), model.lower(), provider.lower())
        if key in memo:
            return memo[key]
        h, m, p = key
        found: int | None = None
        if m:
            if h:
                hits = [t for t in targets if t[1] == h and _model_matches(t[2], m)]
            else:
                styles = PROVIDER_STYLES.get(p)
                hits = [t for t in targets if _model_matches(t[2], m) and (styles is None or t[3] in styles)]
            # The exact model wins over a dated one; an ambiguous call stays unmatched.
            exact = [t for t in hits if t[2] == m]
            hits = exact or hits
            if len(hits) == 1:
                found = hits[0][0]
        memo[key] = found
        return found

    return match
