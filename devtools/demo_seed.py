"""Demo data: targets standing for providers in real hosting locations, all served by the local
mock LLM server, and one probe per target from every active region.

Idempotent: targets and probes are found by name and brought back to these values, so a second
`make demo` (whose mock server may have another port) repairs rather than duplicates them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from django.db import transaction

from probes.geo import emulated_rtt_ms
from probes.models import AlertRule, IngestSource, Observation, Probe, Region, Target
from probes.realusers.sources import tally
from probes.realusers.store import record
from probes.realusers.types import Observed, Place

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
        # Same name as before the Responses style (update_or_create finds it by name); OpenAI's
        # reasoning models are served by the Responses API, so the demo calls it that way.
        "Demo OpenAI-style reasoning (GCP us-west1)",
        "responses",
        "/v1/responses",
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


# Issue 50's workloads, live only (the history is the short prompt's): one target also sends a 10k-token prompt and
# a cached pair, to a mock server that prefills in proportion to the input and keeps a prompt cache, so its page's
# Workloads section draws a prefill line and a cache saving within minutes of the start. Fewer calls than the short
# prompt's: each sends a prompt five hundred times as long.
WORKLOAD_TARGET = "Demo Anthropic-style (Azure North Europe)"
WORKLOAD_KNOBS = {"prefill_ms_per_1k": 40, "cache": 1}
# probe name, workload, interval (s)
WORKLOAD_PROBES = (("demo 10k-token prompt", "prompt_10k", 30), ("demo cached pair", "cached_pair", 60))

# The live incident: from the end of the history (when live probing starts), the mock server answers this target
# slowly for this region only (a server-side slowdown: the time to first token grows, the network phases do not),
# for LIVE_INCIDENT_LASTS. The regional rule fires once it has held for its window: a few minutes after the start.
LIVE_INCIDENT_TARGET = "Demo Gemini-style (GCP europe-west3)"
LIVE_INCIDENT_REGION = "eu-frankfurt"
LIVE_INCIDENT_AFTER = timedelta(0)
LIVE_INCIDENT_LASTS = timedelta(minutes=10)
LIVE_INCIDENT_EXTRA_MS = 1200.0
# The rule that judges one region at a time: the live incident and the two staged in the history
# (devtools/demo_history.py) are each one target x one region. p90 over 4 minutes: a call or two slowed by this
# busy machine do not breach, and the history's cadence (one call in 2 minutes) still gives each window two calls.
DEMO_REGIONAL_RULE_NAME = "demo: TTFT p90 twice its baseline in one region"
DEMO_REGIONAL_RULE = {
    "metric": "ttft",
    "percentile": "p90",
    "baseline_factor": 2.0,
    "window_minutes": 4,
    "min_samples": 2,
    "min_regions": 1,
}


@dataclass(frozen=True)
class LiveIncident:
    target: str
    region: str
    starts: datetime
    ends: datetime

    def knobs(self) -> dict:
        """The mock server's knobs that stage it (devtools/mockllm/knobs.py: slow_*)."""
        return {
            "slow_region": self.region,
            "slow_ms": LIVE_INCIDENT_EXTRA_MS,
            "slow_from": f"{self.starts.timestamp():.0f}",
            "slow_until": f"{self.ends.timestamp():.0f}",
        }


def live_incident(started: datetime, regions: list[Region]) -> LiveIncident | None:
    """The live incident of a demo started at `started`: LIVE_INCIDENT_REGION (or the first demo region when it is
    not probed), from LIVE_INCIDENT_AFTER after the start for LIVE_INCIDENT_LASTS."""
    if not regions:
        return None
    slugs = [r.slug for r in regions]
    region = LIVE_INCIDENT_REGION if LIVE_INCIDENT_REGION in slugs else slugs[0]
    starts = started + LIVE_INCIDENT_AFTER
    return LiveIncident(LIVE_INCIDENT_TARGET, region, starts, starts + LIVE_INCIDENT_LASTS)


def demo_regions(limit: int | None = None) -> list[Region]:
    regions = list(Region.objects.filter(active=True).order_by("id"))
    return regions[:limit] if limit else regions


@transaction.atomic
def _probe(target: Target, name: str, interval_s: int, workload: str, regions: list[Region]) -> Probe:
    probe, _ = Probe.objects.update_or_create(
        target=target,
        name=name,
        defaults={
            "interval_seconds": interval_s,
            "timeout_seconds": DEMO_TIMEOUT_S,
            "max_tokens": 64,
            "workload": workload,
            "enabled": True,
        },
    )
    probe.regions.set(regions)
    return probe


def seed(mock_base_url: str, regions: list[Region], incident: LiveIncident | None = None) -> list[Probe]:
    """Create or update the demo targets and probes; mock_base_url like http://localhost:9100. The incident's
    target gets the knobs that stage it in its URL."""
    probes = []
    for name, style, path, model, location, lat, lon, knobs in TARGETS:
        staged = incident.knobs() if incident is not None and incident.target == name else {}
        workloads = WORKLOAD_KNOBS if name == WORKLOAD_TARGET else {}
        query = urlencode({**COMMON_KNOBS, **knobs, **workloads, **staged})
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
        probes.append(_probe(target, DEMO_PROBE_NAME, DEMO_INTERVAL_S, "short", regions))
        for probe_name, workload, interval in WORKLOAD_PROBES if name == WORKLOAD_TARGET else ():
            probes.append(_probe(target, probe_name, interval, workload, regions))
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
    AlertRule.objects.get_or_create(name=DEMO_REGIONAL_RULE_NAME, defaults=DEMO_REGIONAL_RULE)
    return probes


# Two objectives, so /slos/ has figures from the first minute: every target from every region, and a mix of users
# over the first two regions. 95 %, not 99 %: the mock fails 2 to 3 % of calls on purpose (COMMON_KNOBS), which would
# spend a 1 % budget from the start. The staged incidents (a target slow in one region) spend some of it.
DEMO_OBJECTIVE_NAME = "demo: chat starts within 1.5 s"
DEMO_MIX_OBJECTIVE_NAME = "demo: our users' mix"
DEMO_OBJECTIVE = {
    "ttft_threshold_ms": 1500.0,
    "degraded_ttft_threshold_ms": 1000.0,
    "objective_percent": 95.0,
    "window": "rolling_30d",
}


def seed_objectives(regions: list[Region]) -> list[int]:
    """Create the demo's objectives over every demo target (once; an edited one is left as it is) and count each
    one not yet counted from the raw rows kept (none on a first run, so at once). Their ids."""
    from probes.models import ServiceLevelObjective
    from probes.slos.rebuild import rebuild

    targets = list(Target.objects.filter(name__in=[t[0] for t in TARGETS]))
    mix = {r.slug: share for r, share in zip(regions[:2], (60, 40), strict=False)}
    objectives = []
    for name, extra in ((DEMO_OBJECTIVE_NAME, {}), (DEMO_MIX_OBJECTIVE_NAME, {"mix": mix})):
        objective, created = ServiceLevelObjective.objects.get_or_create(
            name=name, defaults={**DEMO_OBJECTIVE, **extra}
        )
        if created:
            objective.targets.set(targets)
        objectives.append(objective)
    for objective in objectives:
        objective.refresh_from_db()
        if objective.enabled and objective.counted_condition != objective.condition_fingerprint():
            rebuild(objective.id)
    return [o.id for o in objectives]


DEMO_SOURCE_NAME = "demo app"
# Cities a demo application's users call from (coordinates at city resolution), each a few calls an hour.
DEMO_CITIES = [
    Place("NG", "Lagos", 6.45, 3.40, "attributes"),
    Place("GB", "London", 51.51, -0.13, "attributes"),
    Place("DE", "Berlin", 52.52, 13.40, "attributes"),
    Place("US", "New York", 40.71, -74.01, "attributes"),
    Place("BR", "São Paulo", -23.55, -46.63, "attributes"),
    Place("IN", "Mumbai", 19.08, 72.88, "attributes"),
    Place("JP", "Osaka", 34.69, 135.50, "attributes"),
    Place("AU", "Sydney", -33.87, 151.21, "attributes"),
]
DEMO_REAL_USER_HOURS = 24
DEMO_CALLS_PER_HOUR = 5
# What a user waits beyond the probe's view: the round trips of TLS and the request over their access
# network, and painting the first token.
DEMO_ROUND_TRIPS = 3
DEMO_RENDER_MS = 40.0


def seed_real_users(now: datetime | None = None, seed: int = 14) -> int:
    """Real users for the map's real-user layer and the Real users panels: a demo ingest source and, for
    each hour of the last DEMO_REAL_USER_HOURS it has none for, a few calls from each of DEMO_CITIES to every
    demo target, stored through the receivers' store (raw rows and rollups). Returns the calls added."""
    now = now or datetime.now(UTC)
    source = IngestSource.objects.filter(name=DEMO_SOURCE_NAME).first()
    if source is None:
        from probes.realusers.sources import create_source

        # The token is not needed by the demo (nothing exports to it) and is not kept or shown.
        source, _token = create_source(DEMO_SOURCE_NAME, [])
    newest = Observation.objects.filter(source=source).order_by("-observed_at").values_list("observed_at", flat=True)
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=DEMO_REAL_USER_HOURS - 1)
    if newest:
        start = max(start, newest[0].replace(minute=0, second=0, microsecond=0) + timedelta(hours=1))
    targets = list(Target.objects.filter(name__in=[t[0] for t in TARGETS]))
    knobs = {t[0]: t[7] for t in TARGETS}
    rng = random.Random(f"{seed}-{start.isoformat()}")
    observed = []
    hour = start
    while hour <= now:
        for place in DEMO_CITIES:
            for target in targets:
                rtt = emulated_rtt_ms(place.latitude, place.longitude, target.latitude, target.longitude)
                base = knobs[target.name]["ttft_ms"] + DEMO_ROUND_TRIPS * rtt + DEMO_RENDER_MS
                for _ in range(DEMO_CALLS_PER_HOUR):
                    at = hour + timedelta(seconds=rng.uniform(0, 3599))
                    if at > now:
                        continue
                    ttft = base * rng.lognormvariate(0, 0.25)
                    observed.append(
                        Observed(
                            "span",
                            at,
                            place,
                            # gen_ai.provider.name: OpenAI's for both of its API styles.
                            provider="openai" if target.api_style == "responses" else target.api_style,
                            model=target.model,
                            operation="chat",
                            service="demo app",
                            ttft_ms=ttft,
                            ttft_from="gen_ai.response.time_to_first_chunk",
                            total_ms=ttft + COMMON_KNOBS["tokens"] * COMMON_KNOBS["gap_ms"] * rng.uniform(0.9, 1.3),
                            output_tokens=COMMON_KNOBS["tokens"],
                            error_type="500" if rng.random() < 0.01 else "",
                            target_id=target.id,
                        )
                    )
        hour += timedelta(hours=1)
    record(source.id, observed, now=now)
    tally(source.id, calls=len(observed), now=now)
    return len(observed)
