"""The ingest benchmarks' workload: bench targets and probes, realistic measurement payloads (outcomes,
failures and phases as providers give them), one distinct (probe, region, slot) each, and the same rows as
CSV for a reference COPY. Used by bench/ingest.py and bench/row_size.py (both put bench/ on sys.path by
being run as scripts)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from devtools.harness import BenchError

TARGETS = 5
PROBES = 100  # x 15 seeded regions = 1,500 (probe, region) pairs
INTERVAL_S = 10  # slot spacing of the backlog
LATE_FRACTION = 0.01  # rows one to three hours back (redeliveries): batches then lock and mark several hours


# --- the workload: realistic payloads, one distinct slot each ----------------------------------------


def bench_target(prefix: str, i: int, style: str):
    """The i-th bench target of a bench (get-or-create, so reruns reuse it): a URL that never resolves, and a
    model where the style sends one."""
    from probes.models import Target

    target, _ = Target.objects.get_or_create(
        name=f"{prefix}-target-{i}",
        defaults={
            "api_style": style,
            "url": f"https://{prefix}-{i}.invalid/v1/chat/completions",
            "model": "" if style in ("gemini", "http") else f"{prefix}-model",
        },
    )
    return target


def seed_rows() -> tuple[list[tuple[int, int]], list[int]]:
    """Bench targets and probes (get-or-create); returns (probe_id, target_id) pairs and region ids."""
    from probes.models import Probe, Region

    regions = list(Region.objects.order_by("id"))
    if not regions:
        raise BenchError("no regions in the bench database (the seed migration did not run?)")
    targets = []
    for i in range(TARGETS):
        targets.append(bench_target("bench", i, ("openai", "anthropic", "gemini", "openai", "http")[i % 5]))
    pairs = []
    for j in range(PROBES):
        target = targets[j % TARGETS]
        probe, created = Probe.objects.get_or_create(
            target=target, name=f"bench-probe-{j}", defaults={"interval_seconds": 60, "timeout_seconds": 30}
        )
        if created or probe.regions.count() != len(regions):
            probe.regions.set(regions)
        pairs.append((probe.id, target.id))
    return pairs, [r.id for r in regions]


def _ms(rng: random.Random, mu: float, sigma: float) -> float:
    return round(rng.lognormvariate(mu, sigma), 3)


def make_result(rng: random.Random, started: datetime, http_style: bool) -> dict:
    from probes.engine.result import Measurement

    m = Measurement(started_at=started.isoformat(timespec="microseconds"))
    warm = rng.random() < 0.3
    m.connection = "warm" if warm else "cold"
    roll = rng.random()
    if not warm:
        m.dns_ms = None if rng.random() < 0.1 else _ms(rng, 1.5, 0.8)  # a literal IP: no DNS
    if roll < 0.005 and not warm:
        m.outcome, m.error = "dns_error", "[Errno -2] Name or service not known"
        m.dns_ms = None
        m.total_ms = _ms(rng, 3.0, 0.5)
        return m.to_dict()
    if not warm:
        m.connect_ms = _ms(rng, 3.5, 0.7)
    if roll < 0.012 and not warm:
        m.outcome, m.error, m.connect_ms = "connect_error", "[Errno 111] Connection refused", None
        m.total_ms = _ms(rng, 4.0, 0.5)
        return m.to_dict()
    if not warm:
        m.tls_ms = _ms(rng, 3.8, 0.6)
    if roll < 0.016 and not warm:
        m.outcome, m.error, m.tls_ms = "tls_error", "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed", None
        m.total_ms = _ms(rng, 4.5, 0.5)
        return m.to_dict()
    m.remote_addr = f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    m.http_version = "HTTP/2" if rng.random() < 0.8 else "HTTP/1.1"
    if roll < 0.036:
        m.outcome, m.total_ms = "timeout", 30000.0
        m.error = "no response within 30 s"
        if rng.random() < 0.5:
            m.http_status = 200
            m.ttfb_ms = _ms(rng, 6.0, 0.5)
        return m.to_dict()
    m.ttfb_ms = _ms(rng, 5.8, 0.6)
    if roll < 0.066:
        m.outcome, m.http_status = "http_error", rng.choice((429, 429, 500, 503, 401))
        if m.http_status == 429:
            m.error_type, m.retry_after_s = "rate_limit_error", float(rng.randint(1, 30))
        m.error = (
            f'HTTP {m.http_status}: {{"error": {{"message": "bench \\"quoted\\", comma, newline\\n", "type": "x"}}}}'
        )
        m.total_ms = round(m.ttfb_ms + rng.random() * 5, 3)
        m.response_bytes = rng.randint(80, 600)
        return m.to_dict()
    m.http_status = 200
    if http_style:
        m.total_ms = round(m.ttfb_ms + _ms(rng, 1.0, 0.5), 3)
        m.response_bytes = rng.randint(100, 5000)
        return m.to_dict()
    m.first_event_ms = round(m.ttfb_ms + _ms(rng, 1.0, 0.7), 3)
    m.ttft_ms = round(m.first_event_ms + _ms(rng, 2.0, 1.0), 3)
    m.ttfat_ms = (
        None if rng.random() < 0.02 else round(m.ttft_ms + (_ms(rng, 5.0, 1.0) if rng.random() < 0.2 else 0), 3)
    )
    tokens = rng.randint(5, 64)
    m.output_tokens, m.tokens_estimated = tokens, rng.random() < 0.1
    m.itl_p50_ms = _ms(rng, 2.8, 0.4)
    m.itl_p95_ms = round(m.itl_p50_ms * (1.5 + rng.random() * 2), 3)
    m.itl_max_ms = round(m.itl_p95_ms * (1 + rng.random()), 3)
    stream_ms = m.itl_p50_ms * (tokens - 1)
    m.tokens_per_s = round((tokens - 1) / (stream_ms / 1000), 3) if tokens > 1 else None
    m.total_ms = round(m.ttft_ms + stream_ms + _ms(rng, 1.0, 0.5), 3)
    m.response_bytes = rng.randint(2000, 40000)
    if roll < 0.071:
        m.outcome, m.error = "truncated", "stream ended before its final event"
    elif roll < 0.074:
        m.outcome, m.error, m.error_type = "upstream_error", "overloaded", "overloaded_error"
    return m.to_dict()


def make_payloads(
    n: int, pairs: list[tuple[int, int]], region_ids: list[int], seed: int, region_slugs: dict[int, str]
) -> list[dict]:
    """n payloads, each its own (probe, region, scheduled_for): a backlog of the most recent slots,
    INTERVAL_S apart, ending now, plus LATE_FRACTION of slots one to three hours back."""
    rng = random.Random(seed)
    now = datetime.now(UTC).replace(microsecond=0)
    last_slot = now - timedelta(seconds=now.timestamp() % INTERVAL_S)
    keys = [(p, t, r) for p, t in pairs for r in region_ids]
    from probes.models import Target

    http_targets = set(Target.objects.filter(api_style="http", name__startswith="bench-").values_list("id", flat=True))
    late = int(n * LATE_FRACTION)
    slots = []
    for i in range(n - late):
        slots.append((*keys[i % len(keys)], last_slot - timedelta(seconds=INTERVAL_S * (i // len(keys)))))
    for i in range(late):  # one to three hours back: never a recent slot, never the same slot twice
        back = timedelta(hours=1 + i % 3, seconds=INTERVAL_S * (i // len(keys)))
        slots.append((*keys[i % len(keys)], last_slot - back))
    rng.shuffle(slots)  # regions report in no particular order
    out = []
    for probe_id, target_id, region_id, slot in slots:
        started = slot + timedelta(microseconds=rng.randint(0, 900_000))
        out.append(
            {
                "probe_id": probe_id,
                "target_id": target_id,
                "region_id": region_id,
                "scheduled_for": slot.isoformat(),
                "worker": f"region-{region_slugs[region_id]}@worker-{rng.randint(1, 3)}",
                "result": make_result(rng, started, target_id in http_targets),
            }
        )
    if len({(p["probe_id"], p["region_id"], p["scheduled_for"]) for p in out}) != n:
        raise BenchError("internal error: payload keys are not distinct")
    return out


# --- CSV for COPY ------------------------------------------------------------------------------------


def csv_field(value) -> str:
    if value is None:
        return ""  # unquoted empty: NULL
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return '"' + str(value).replace('"', '""') + '"'


def build_csv(payloads: list[dict]) -> tuple[bytes, int]:
    from probes.ingest import COLUMNS, clean

    now = datetime.now(UTC)
    lines = []
    for p in payloads:
        row = clean(p, now)
        lines.append(",".join(csv_field(row[c]) for c in COLUMNS))
    return ("\n".join(lines) + "\n").encode(), len(lines)
