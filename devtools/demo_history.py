"""The demo's week of history: what the demo targets would have measured from every demo region before `make demo`
started, stored the way real rows are, so every window (1 h to 30 d), the baseline alert rules and the incident
page have something real to read.

- Cadence: one call per target x region every HISTORY_STEP_S (two minutes) in the past, a twelfth of the live
  probes' cadence: a week of every live slot was far too slow to load at start (issue 47), and so was one a minute
  on a busy machine; two minutes give every hour 30 calls per series, enough for percentiles and for the same-hour
  baselines (probes.readings.alerts.BASELINE_MIN_SAMPLES over 7 days), and two calls to each window of the demo's
  regional rule.
- Values: the live probes' level. The network phases pay the same emulated round trip as live calls
  (probes.geo.emulated_rtt_ms between the region and the target's hosting location), the server part is the
  target's mock knobs (devtools/demo_seed.TARGETS: ttft_ms +- jitter_ms), failures at the target's fault rate.
- A daily rhythm: in each region's busy hours (its local time, from its longitude) the server is slower, by
  30-60 % at the peak (a share drawn per target x region), and at night it runs at the knobs' level.
- Two past incidents (PAST_INCIDENTS): a server-side slowdown of one target for one region (TTFT up, the network
  phases flat), about 3 days ago; and a network path that grew (DNS, TCP connect and TTFB up, then TTFT with them),
  about 5 days ago. The real alert evaluator is then run over those hours (probes.alerts.evaluate.run_pass with
  `now` in the past), so they are incident records like any other.
- Storage: the rows are generated with numpy, written as COPY text through ingest's own statement
  (probes.ingest.store_copied: the day partitions, insert-or-ignore, the tally, the stale-hour marks), counted for
  the objectives in one pass (probes.slos.counting.count_pending), then the rollups of the whole range are built
  once by the real builder (probes.rollups.rebuild_range, as `manage.py rollup --since 8d`).
- A second start on the same state folder only fills the gap since the newest stored row of each series.

Every generated row says so: its `worker` is HISTORY_WORKER.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from devtools.demo_seed import COMMON_KNOBS, DEMO_PROBE_NAME, TARGETS

HISTORY_DAYS = 7
HISTORY_STEP_S = 120
HISTORY_WORKER = "demo history (make demo)"
STORE_WORKERS = 2
# Peak slowdown of the server part in a region's busy hours, drawn per target x region in this range.
BUSY_SLOWDOWN = (0.3, 0.6)
# Busy from 07:00 to 23:00 local time, peaking at 15:00.
BUSY_FROM_H, BUSY_HOURS = 7.0, 16.0
# What a live call pays beyond the emulated delays on this machine (the HTTP client, the mock's event loop):
# read off live demo rows, so history and live calls sit at the same level.
CLIENT_OVERHEAD_MS = 35.0
LOCAL_DNS_MS = 1.5
STREAM_FACTOR = 2.4  # a stream's duration over tokens x gap_ms (the delay line stamps reads late)
# The mock's answers: bytes per style, the HTTP error each fault gives, as live calls store them.
RESPONSE_BYTES = {"openai": 10994, "anthropic": 5425, "gemini": 6476, "responses": 15131}
ERROR_TYPES = {"openai": "server_error", "anthropic": "api_error", "gemini": "INTERNAL", "responses": "server_error"}
ERRORS = {
    "500": (500, "HTTP 500 Internal Server Error: The server had an error while processing your request.", None),
    "429": (429, "HTTP 429 Too Many Requests: Rate limit reached for requests", 7.0),
}


@dataclass(frozen=True)
class PastIncident:
    """A staged incident: `server` adds extra_ms to the server's time to first token; `network` adds extra_ms to
    the path's round trip (and dns_extra_ms to the lookup), which every network phase pays."""

    kind: str
    target: str
    region: str
    days_ago: float  # its start, before the history's end
    hours: float
    extra_ms: float
    dns_extra_ms: float = 0.0

    def span(self, end: datetime) -> tuple[datetime, datetime]:
        start = (end - timedelta(days=self.days_ago)).replace(second=0, microsecond=0)
        return start, start + timedelta(hours=self.hours)


PAST_INCIDENTS = (
    # Each moves its region's TTFT p90 well past twice its same-hour baseline at any hour of the day it starts in,
    # busy hours included (the demo's regional rule): a smaller step only breaches at night.
    PastIncident("server", "Demo Anthropic-style (AWS ap-northeast-1)", "ap-singapore", 3.1, 2.5, 2000.0),
    # Rerouted the long way round: the transatlantic round trip grows by a whole lap of the globe.
    PastIncident("network", "Demo OpenAI-style (AWS us-east-1)", "eu-london", 5.2, 1.5, 1000.0, dns_extra_ms=30.0),
)


def busy_share(hours_utc: np.ndarray, longitude: float) -> np.ndarray:
    """0 at night to 1 at the afternoon peak, by the local solar time of a longitude."""
    local = (hours_utc + longitude / 15.0) % 24.0
    phase = (local - BUSY_FROM_H) / BUSY_HOURS
    return np.where((phase > 0) & (phase < 1), np.sin(np.pi * np.clip(phase, 0, 1)), 0.0)


def _fmt(values: np.ndarray, present: np.ndarray | None = None) -> list[str]:
    """COPY text of a float column: three decimals, \\N where not present."""
    text = [f"{v:.3f}" for v in values.tolist()]
    if present is not None:
        text = [t if ok else "\\N" for t, ok in zip(text, present.tolist(), strict=True)]
    return text


def series_rows(
    probe_id: int,
    target,
    knobs: dict,
    region,
    slots: np.ndarray,
    rng: np.random.Generator,
    incidents: list[tuple[PastIncident, float, float]],
) -> list[str]:
    """COPY lines (probes.ingest.COLUMNS) of one target x region's calls at `slots` (epoch seconds)."""
    from probes.geo import emulated_rtt_ms
    from probes.ingest import COLUMNS

    n = len(slots)
    rtt = emulated_rtt_ms(region.latitude, region.longitude, target.latitude, target.longitude)
    path = np.full(n, rtt)
    dns_extra = np.zeros(n)
    server_extra = np.zeros(n)
    for incident, start, end in incidents:
        inside = (slots >= start) & (slots < end)
        if incident.kind == "server":
            server_extra[inside] += incident.extra_ms
        else:
            path[inside] += incident.extra_ms
            dns_extra[inside] += incident.dns_extra_ms
    jitter = np.maximum(1.0, 0.05 * path)

    def wobble() -> np.ndarray:
        return rng.uniform(-1.0, 1.0, n) * jitter

    dns = np.minimum(0.1 * path, 20.0) + dns_extra + LOCAL_DNS_MS * rng.lognormal(0, 0.4, n)
    connect = dns + np.maximum(path + wobble(), 0.5) + 0.8 * rng.lognormal(0, 0.4, n)
    ttfb = connect + np.maximum(path + wobble(), 0.5) + CLIENT_OVERHEAD_MS * rng.lognormal(0, 0.35, n)
    hours = (slots % 86400) / 3600.0
    rhythm = 1.0 + rng.uniform(*BUSY_SLOWDOWN) * busy_share(hours, region.longitude)
    server = (knobs["ttft_ms"] + rng.uniform(-1.0, 1.0, n) * knobs["jitter_ms"]) * rhythm + server_extra
    ttft = ttfb + np.maximum(server, 1.0)
    tokens = COMMON_KNOBS["tokens"] + knobs.get("reasoning_tokens", 0)
    ttfat = ttft + knobs.get("reasoning_tokens", 0) * COMMON_KNOBS["gap_ms"] * 4.0
    stream = (tokens - 1) * COMMON_KNOBS["gap_ms"] * STREAM_FACTOR * rng.lognormal(0, 0.12, n)
    total = ttfat + stream
    first_event = ttft if target.api_style == "gemini" else ttfb + 0.3
    itl_p50 = COMMON_KNOBS["gap_ms"] * rng.uniform(0.8, 1.3, n)
    itl_p95 = COMMON_KNOBS["gap_ms"] * rng.uniform(6.0, 10.0, n)
    itl_max = itl_p95 * rng.uniform(1.03, 1.15, n)
    ok = rng.random(n) >= knobs.get("fault_rate", COMMON_KNOBS["fault_rate"])
    started = slots + rng.uniform(0.002, 0.010, n)
    ingested = started + total / 1000.0 + 0.05

    status, error, retry_after = ERRORS[knobs.get("fault", COMMON_KNOBS["fault"])]
    values = {
        "probe_id": [str(probe_id)] * n,
        "target_id": [str(target.id)] * n,
        "region_id": [str(region.id)] * n,
        "scheduled_for": _iso(slots),
        "started_at": _iso(started),
        "worker": [HISTORY_WORKER] * n,
        "ingested_at": _iso(ingested),
        "outcome": ["ok" if k else "http_error" for k in ok.tolist()],
        "connection": ["cold"] * n,
        "tokens_estimated": ["f" if k else "\\N" for k in ok.tolist()],
        "retry_after_s": ["\\N" if k or retry_after is None else f"{retry_after:g}" for k in ok.tolist()],
        "dns_ms": _fmt(dns),
        "connect_ms": _fmt(connect),
        "tls_ms": ["\\N"] * n,  # the demo targets are plain HTTP on loopback
        "ttfb_ms": _fmt(ttfb),
        "first_event_ms": _fmt(first_event, ok),
        "ttft_ms": _fmt(ttft, ok),
        "ttfat_ms": _fmt(ttfat, ok),
        "total_ms": _fmt(np.where(ok, total, ttfb)),
        "tokens_per_s": _fmt((tokens - 1) / stream * 1000.0, ok),
        "itl_p50_ms": _fmt(itl_p50, ok),
        "itl_p95_ms": _fmt(itl_p95, ok),
        "itl_max_ms": _fmt(itl_max, ok),
        "http_status": ["200" if k else str(status) for k in ok.tolist()],
        "response_bytes": [str(RESPONSE_BYTES[target.api_style]) if k else "\\N" for k in ok.tolist()],
        "output_tokens": [str(tokens) if k else "\\N" for k in ok.tolist()],
        "error": ["\\N" if k else error for k in ok.tolist()],
        "error_type": ["\\N" if k else ERROR_TYPES[target.api_style] for k in ok.tolist()],
        "http_version": ["HTTP/1.1"] * n,
        "remote_addr": ["127.0.0.1"] * n,
        # The request leaves right after the connection (a short prompt), never after the answer's head.
        "request_sent_ms": _fmt(np.minimum(connect + 0.1, ttfb)),
        "workload": ["short"] * n,
        # Not drawn for the history: the live demo's calls carry the mock server's counts.
        **dict.fromkeys(
            (
                "warm_ttft_ms",
                "input_tokens",
                "cached_input_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "ratelimit_remaining_requests",
                "ratelimit_remaining_tokens",
            ),
            ["\\N"] * n,
        ),
    }
    missing = [c for c in COLUMNS if c not in values]
    if missing:
        raise RuntimeError(f"the demo history has no values for {', '.join(missing)} (probes.ingest.COLUMNS grew)")
    return ["\t".join(row) + "\n" for row in zip(*(values[c] for c in COLUMNS), strict=True)]


def _iso(epochs: np.ndarray) -> list[str]:
    """COPY text of UTC times given as epoch seconds (ISO 8601 with a Z), to the microsecond."""
    stamps = (epochs * 1e6).astype("int64").astype("datetime64[us]")
    return np.datetime_as_string(stamps, unit="us", timezone="UTC").tolist()


@dataclass
class Loaded:
    rows: int
    series: int
    since: datetime | None
    until: datetime
    hours: int
    incidents: list[tuple[PastIncident, datetime, datetime]]
    opened: int  # incident records the evaluator opened over the past incidents' hours
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, for the demo's output


def load_history(
    now: datetime | None = None,
    *,
    days: float = HISTORY_DAYS,
    step_s: int = HISTORY_STEP_S,
    seed: int = 47,
    evaluate: bool = True,
) -> Loaded:
    """Store the demo probes' history up to `now` (default the clock) and build its rollups; then, with
    `evaluate`, run the alert evaluator over the staged incidents' hours. Series that already have rows get only
    the slots after their newest one."""
    from django.db.models import Max

    from probes import partitions
    from probes.ingest import store_copied
    from probes.models import Measurement, Probe
    from probes.rollups import rebuild_range
    from probes.rollups.side_by_side import side_by_side
    from probes.scheduling import slot_offset
    from probes.slos.counting import count_pending

    now = now or datetime.now(UTC)
    end = now.replace(microsecond=0)
    knobs = {name: {**COMMON_KNOBS, **k} for name, *_, k in TARGETS}
    probes = list(
        Probe.objects.filter(name=DEMO_PROBE_NAME, target__name__in=knobs)
        .select_related("target")
        .prefetch_related("regions")
    )
    newest = {
        (p, r): t
        for p, r, t in Measurement.objects.filter(probe__in=probes)
        .values("probe_id", "region_id")
        .annotate(t=Max("scheduled_for"))
        .values_list("probe_id", "region_id", "t")
    }
    earliest = end - timedelta(days=days)
    staged = [(incident, *incident.span(end)) for incident in PAST_INCIDENTS]
    staged = [(i, s, e) for i, s, e in staged if s >= earliest]
    clock = time.monotonic()
    plan = []
    for probe in sorted(probes, key=lambda p: p.id):
        target = probe.target
        if target.latitude is None or target.longitude is None:
            continue
        offset = slot_offset(probe.id, probe.interval_seconds)
        for region in sorted(probe.regions.all(), key=lambda r: r.id):
            since = earliest
            if (probe.id, region.id) in newest:
                since = max(since, newest[(probe.id, region.id)] + timedelta(seconds=step_s))
            # The probe's own slots (its interval and offset), one in every step_s.
            low = math.ceil((since.timestamp() - offset) / step_s) * step_s + offset
            slots = np.arange(low, end.timestamp() - step_s, step_s, dtype=np.float64)
            if len(slots):
                mine = [
                    (i, s.timestamp(), e.timestamp())
                    for i, s, e in staged
                    if i.target == target.name and i.region == region.slug
                ]
                plan.append((probe.id, target, knobs[target.name], region, slots, mine))
    if not plan:
        return Loaded(0, 0, None, end, 0, [], 0)
    since = datetime.fromtimestamp(min(item[4][0] for item in plan), UTC)
    # A time in each day the rows fall in: the days that need a partition.
    each_day = [since + timedelta(days=k) for k in range(math.ceil((end - since) / timedelta(days=1)) + 1)]

    def store(part: int) -> int:
        # Generated while COPY streams them: PostgreSQL parses one series while the next is made. Two halves of the
        # series side by side, each on a connection of its own: PostgreSQL stores a statement's rows on one core.
        # They share no row (a tally row is one target x region) and take the hours' version rows in one order.
        generator = np.random.default_rng([seed, part])

        def blocks():
            for probe_id, target, target_knobs, region, slots, mine in plan[part::STORE_WORKERS]:
                lines = series_rows(probe_id, target, target_knobs, region, slots, generator, mine)
                yield "".join(lines).encode()

        return store_copied(blocks(), each_day)

    partitions.ensure_for_rows(partitions.MEASUREMENTS, each_day, now)
    rows = sum(side_by_side(store, range(STORE_WORKERS), STORE_WORKERS))
    timings = {"generated and stored": time.monotonic() - clock}
    # The objectives count behind ingest: in one pass here, before the evaluator reads them.
    count_pending()
    timings["counted"] = time.monotonic() - clock - sum(timings.values())
    hours, _ = rebuild_range(since, end, workers=2)
    timings["rolled up"] = time.monotonic() - clock - sum(timings.values())
    # Staged only when the load covered them (a later start fills a gap and stages nothing there).
    staged = [(i, s, e) for i, s, e in staged if s >= since]
    opened = evaluate_past(staged) if evaluate else 0
    timings["evaluated"] = time.monotonic() - clock - sum(timings.values())
    return Loaded(rows, len(plan), since, end, hours, staged, opened, timings)


# The evaluator's passes over a staged incident: every PASS_EVERY around its start and its end, for EDGE after each
# (a rule moves to pending, then to firing once its state has held for a whole window, 4 minutes; the same to
# clearing and resolved), and every PASS_WHILE in between, where nothing changes and a pass writes nothing. A window
# holds two history calls; when one of them is a staged fault the pass judges nothing there and the rule falls back
# to ok, so the edge goes on long enough for the next two passes to move it.
PASS_EVERY = timedelta(minutes=5)
PASS_WHILE = timedelta(hours=1)
EDGE = timedelta(minutes=20)


def pass_times(start: datetime, end: datetime) -> list[datetime]:
    """When the evaluator runs over a staged incident of [start, end), oldest first."""
    times = set()
    for edge in (start, end):
        at = edge - PASS_EVERY
        while at <= edge + EDGE:
            times.add(at)
            at += PASS_EVERY
    at = start + EDGE
    while at < end:
        times.add(at)
        at += PASS_WHILE
    return sorted(times)


def evaluate_past(staged: list[tuple[PastIncident, datetime, datetime]]) -> int:
    """Run the real alert evaluator (probes.alerts.evaluate.run_pass) as if it were each moment of the staged
    incidents' hours, oldest first. Returns the incidents it opened."""
    from probes.alerts.evaluate import run_pass
    from probes.alerts.models import Incident

    before = Incident.objects.count()
    # A line per pass is the evaluator's log at work; here it would bury the demo's own lines.
    log = logging.getLogger("probes.alerts.evaluate")
    level = log.level
    log.setLevel(logging.WARNING)
    try:
        for _incident, start, end in sorted(staged, key=lambda s: s[1]):
            for at in pass_times(start, end):
                run_pass(at)
    finally:
        log.setLevel(level)
    return Incident.objects.count() - before
