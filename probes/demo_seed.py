"""Demo data: targets standing for providers in real hosting locations, all served by the local
mock LLM server, and one probe per target from every active region.

Idempotent: targets and probes are found by name and brought back to these values, so a second
`make demo` (whose mock server may have another port) repairs rather than duplicates them.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.db import transaction

from probes.models import AlertRule, Probe, Region, Target

DEMO_PROBE_NAME = "demo stream"
DEMO_RULE_NAME = "demo: TTFT p95 twice its baseline in three regions"
DEMO_INTERVAL_S = 10
DEMO_TIMEOUT_S = 8.0

# Shared by every target: realistic streaming, a rare failure, and a cold start after idle.
COMMON_KNOBS = {
    "tokens": 40,
    "gap_ms": 15,
    "fault": "500",
    "fault_rate": 0.02,
    "cold_start_after_s": 45,
    "cold_start_ms": 900,
}

# name, style, path on the mock server, model, location, latitude, longitude, knobs
TARGETS = [
    (
        "Demo OpenAI-style (AWS us-east-1)",
        "openai",
        "/v1/chat/completions",
        "demo-gpt",
        "AWS us-east-1, Ashburn, Virginia",
        39.0438,
        -77.4874,
        {"ttft_ms": 350, "jitter_ms": 120},
    ),
    (
        "Demo Anthropic-style (Azure North Europe)",
        "anthropic",
        "/v1/messages",
        "demo-claude",
        "Azure North Europe, Dublin",
        53.3498,
        -6.2603,
        {"ttft_ms": 450, "jitter_ms": 150},
    ),
    (
        "Demo Gemini-style (GCP europe-west3)",
        "gemini",
        # An API base: the engine adds /models/<model>:streamGenerateContent from the model field.
        "/v1beta",
        "demo-gemini",
        "GCP europe-west3, Frankfurt",
        50.1109,
        8.6821,
        {"ttft_ms": 280, "jitter_ms": 90},
    ),
    (
        "Demo OpenAI-style reasoning (GCP us-west1)",
        "openai",
        "/v1/chat/completions",
        "demo-reasoner",
        "GCP us-west1, The Dalles, Oregon",
        45.5946,
        -121.1787,
        {"ttft_ms": 600, "jitter_ms": 200, "reasoning_tokens": 8, "fault": "429", "fault_rate": 0.03},
    ),
    (
        "Demo Anthropic-style (AWS ap-northeast-1)",
        "anthropic",
        "/v1/messages",
        "demo-claude",
        "AWS ap-northeast-1, Tokyo",
        35.6762,
        139.6503,
        {"ttft_ms": 380, "jitter_ms": 110},
    ),
]


def demo_regions(limit: int | None = None) -> list[Region]:
    regions = list(Region.objects.filter(active=True).order_by("id"))
    return regions[:limit] if limit else regions


@transaction.atomic
def seed(mock_base_url: str, regions: list[Region]) -> list[Probe]:
    """Create or update the demo targets and probes; mock_base_url like http://localhost:9100."""
    probes = []
    for name, style, path, model, location, lat, lon, knobs in TARGETS:
        query = urlencode({**COMMON_KNOBS, **knobs})
        target, _ = Target.objects.update_or_create(
            name=name,
            defaults={
                "api_style": style,
                "url": f"{mock_base_url}{path}?{query}",
                "model": model,
                "api_key_env": "",
                "headers": {},
                "location_name": location,
                "latitude": lat,
                "longitude": lon,
            },
        )
        probe, _ = Probe.objects.update_or_create(
            target=target,
            name=DEMO_PROBE_NAME,
            defaults={
                "interval_seconds": DEMO_INTERVAL_S,
                "timeout_seconds": DEMO_TIMEOUT_S,
                "max_tokens": 64,
                "enabled": True,
            },
        )
        probe.regions.set(regions)
        probes.append(probe)
    # One alert rule, so the demo's incidents page has something to judge: TTFT p95 twice its baseline in
    # three regions for ten minutes. No channel: a demo notifies nobody.
    AlertRule.objects.get_or_create(
        name=DEMO_RULE_NAME,
        defaults={
            "metric": "ttft",
            "percentile": "p95",
            "baseline_factor": 2.0,
            "window_minutes": 10,
            "min_samples": 5,
            "min_regions": 3,
        },
    )
    return probes
