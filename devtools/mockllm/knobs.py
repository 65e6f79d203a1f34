"""What a request may ask of the mock server: the knobs (timing and faults), how they are parsed
from the query string, x-mock-* headers and server defaults, and the credential helpers behind
echo_key and the log's `credential` record. Plain data and functions, kept apart from the HTTP
side so the command line can validate defaults without starting anything."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from probes.engine.providers import PROVIDER_LIST

# overloaded: Anthropic's 529 overloaded_error, the other styles' 503 saying the model is overloaded.
FAULTS = ("none", "429", "500", "overloaded", "error_mid", "truncate", "stall", "malformed", "slow_headers")
# echo_key: put the credential the request carried into the fault's error message (the 429/500 body, the
# error_mid event, the malformed line), as some providers do, in one of these forms; tests check it never
# reaches what a client reports.
ECHO_FORMS = ("none", "raw", "percent", "json", "repr")
# error_format: the 429/500 body as the provider's JSON, or as plain text (a proxy's or gateway's page).
ERROR_FORMATS = ("json", "text")
# encoding: compress bodies and streams whatever the client asked for (servers that ignore Accept-Encoding).
ENCODINGS = ("identity", "gzip", "deflate")
# provider: speak that preset's dialect of chat completions (devtools/mockllm/dialects.py); Azure's own
# paths choose it too.
PROVIDERS = ("none", *(p.key for p in PROVIDER_LIST if p.style == "openai"))
CHOICES = {
    "fault": FAULTS,
    "echo_key": ECHO_FORMS,
    "error_format": ERROR_FORMATS,
    "encoding": ENCODINGS,
    "provider": PROVIDERS,
}
# The headers a credential may travel in: bearer, Azure's api-key, Anthropic's, Gemini's.
CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key", "x-goog-api-key")
MID_FAULTS = ("error_mid", "truncate", "stall")
# slow_region names a region by its slug: the requests that say they come from it (the REGION_HEADER probes send
# under emulated geography, probes.scheduling.region_spec) get slow_ms more before their first token while the
# wall clock is in [slow_from, slow_until) (epoch seconds): a server slow for one region only, for a while.
FREE_TEXT = {"slow_region": re.compile(r"[a-z0-9-]{0,64}")}
REGION_HEADER = "x-emulated-region"


def credential_value(headers: Mapping[str, str]) -> str | None:
    for name in CREDENTIAL_HEADERS:
        if name in headers:
            value = headers[name]
            return value[7:] if name == "authorization" and value.lower().startswith("bearer ") else value
    return None


def echo_text(headers: Mapping[str, str], form: str) -> str:
    """The text a provider that echoes keys adds to its error message."""
    value = credential_value(headers)
    if form == "none" or value is None:
        return ""
    shown = {
        "raw": value,
        "percent": quote(value, safe=""),
        "json": json.dumps(value)[1:-1].replace("/", "\\/"),
        "repr": repr(value.encode("latin-1", "backslashreplace")),
    }[form]
    return f" Incorrect API key provided: {shown}."


def credential_record(headers: Mapping[str, str]) -> dict[str, str] | None:
    """Which header carried a credential, and a digest of it (never the value):
    lets tests check that a key was sent where its provider expects it."""
    for name in CREDENTIAL_HEADERS:
        if name in headers:
            value = headers[name]
            if name == "authorization" and value.lower().startswith("bearer "):
                value = value[7:]
            return {
                "header": name,
                "sha256": hashlib.sha256(value.encode()).hexdigest(),
                "anthropic_version": headers.get("anthropic-version", ""),
            }
    return None


class KnobError(ValueError):
    def __init__(self, knob: str, message: str) -> None:
        super().__init__(f"invalid knob {knob}: {message}")
        self.knob = knob


# name: (type, built-in default, lowest, highest); flags are the ints 0 and 1, and str knobs take one of CHOICES.
MAX_MS = 3_600_000
KNOBS: dict[str, tuple[type, Any, float, float]] = {
    "headers_delay_ms": (float, 0.0, 0, MAX_MS),
    "ttft_ms": (float, 0.0, 0, MAX_MS),
    "tokens": (int, 8, 0, 100_000),
    "gap_ms": (float, 0.0, 0, MAX_MS),
    "reasoning_tokens": (int, 0, 0, 100_000),
    "jitter_ms": (float, 0.0, 0, MAX_MS),
    "pings": (int, 0, 0, 1_000),
    "usage": (int, 1, 0, 1),
    "crlf": (int, 0, 0, 1),
    "split": (int, 0, 0, 1),
    "multiline": (int, 0, 0, 1),
    "fault": (str, "none", 0, 0),
    "echo_key": (str, "none", 0, 0),
    "error_format": (str, "json", 0, 0),
    "encoding": (str, "identity", 0, 0),
    "provider": (str, "none", 0, 0),
    "fault_rate": (float, 1.0, 0, 1),
    "cold_start_after_s": (float, 0.0, 0, 86_400 * 365),
    "cold_start_ms": (float, 0.0, 0, MAX_MS),
    "retry_after": (int, 7, 0, 86_400),
    "stall_s": (float, 600.0, 0, 86_400),
    "slow_headers_ms": (float, 300.0, 0, MAX_MS),
    "status": (int, 200, 200, 599),
    "body_bytes": (int, 0, 0, 64 * 1024 * 1024),
    "slow_region": (str, "", 0, 0),
    "slow_ms": (float, 0.0, 0, MAX_MS),
    "slow_from": (float, 0.0, 0, 2**33),
    "slow_until": (float, 0.0, 0, 2**33),
    # Long and cached prompts, rate limits (devtools/mockllm/workloads.py has the rules): prefill time per
    # 1,000 uncached input tokens; the prompt cache, its lifetime, the shortest prefix it keeps and what a hit
    # takes off ttft_ms; budgets per API key and model per window (0: none).
    "prefill_ms_per_1k": (float, 0.0, 0, MAX_MS),
    "cache": (int, 0, 0, 1),
    "cache_ttl_s": (float, 300.0, 0, 86_400 * 30),
    "cache_min_tokens": (int, 1024, 0, 10_000_000),
    "cache_hit_ms": (float, 0.0, 0, MAX_MS),
    "ratelimit_requests": (int, 0, 0, 100_000_000),
    "ratelimit_tokens": (int, 0, 0, 10_000_000_000),
    "ratelimit_window_s": (float, 60.0, 0.001, 86_400),
}


def parse_knob(name: str, raw: Any) -> Any:
    """One knob value from text (or a Python value, for server defaults); KnobError names the knob."""
    if name not in KNOBS:
        raise KnobError(name, f"unknown knob (known: {', '.join(KNOBS)})")
    kind, _, low, high = KNOBS[name]
    text = str(int(raw) if isinstance(raw, bool) else raw).strip()
    if name in FREE_TEXT:
        if not FREE_TEXT[name].fullmatch(text):
            raise KnobError(name, f"must match {FREE_TEXT[name].pattern} (got {raw!r})")
        return text
    if kind is str:
        if text not in CHOICES[name]:
            raise KnobError(name, f"must be one of {', '.join(CHOICES[name])} (got {raw!r})")
        return text
    try:
        value = float(text) if kind is float else int(text, 10)
    except ValueError:
        value = None
    # float() accepts "nan" and "inf", which would poison every delay.
    if value is None or not math.isfinite(value) or not low <= value <= high:
        what = "a number" if kind is float else "an integer"
        raise KnobError(name, f"must be {what} from {low:g} to {high:g} (got {raw!r})")
    return value


def resolve_knobs(query: Mapping[str, str], headers: Mapping[str, str], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Header beats query string beats server defaults beats built-ins."""
    knobs = {name: defaults.get(name, spec[1]) for name, spec in KNOBS.items()}
    for name, raw in query.items():
        if name in KNOBS:  # other parameters (Gemini's alt=sse, key=...) are not ours
            knobs[name] = parse_knob(name, raw)
    for header, raw in headers.items():
        if header.startswith("x-mock-") and header != "x-mock-request-id":
            # Unknown x-mock-* headers are refused: a typo must not silently test nothing.
            name = header[len("x-mock-") :].replace("-", "_")
            knobs[name] = parse_knob(name, raw)
    return knobs


def slowed_for_region(knobs: Mapping[str, Any], headers: Mapping[str, str], now: float) -> float:
    """The extra delay before the first token the slow_* knobs ask for this request (0 when none)."""
    region = headers.get(REGION_HEADER, "")
    if not knobs["slow_ms"] or not region or region != knobs["slow_region"]:
        return 0.0
    return knobs["slow_ms"] if knobs["slow_from"] <= now < knobs["slow_until"] else 0.0
