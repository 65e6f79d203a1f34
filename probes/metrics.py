"""THE list of metrics, and of the other stored fields of a measurement.

Why one list: a metric used to be named in seven places (ingest columns,
rollup building, two readers, CSV headers, chart labels, the page's labels
and its script), and nothing checked that they agreed, so a new engine field
could be dropped silently. Everything that needs a metric's column, unit,
label, histogram or CSV column iterates METRICS instead.

Adding a metric: an entry here, the model field(s) (the raw column on
Measurement; with histogram=True also `<name>_hist` on RollupCounts, which
every rollup model shares), and a migration. tests/readings/test_metric_registry.py fails when the
engine's result grows a field that ingest neither stores nor lists in
IGNORED_ENGINE_FIELDS with a reason.

Plain data only (no Django, no database): the engine's field names are the
contract; this module only describes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from probes.engine.result import REFUSED


@dataclass(frozen=True)
class Metric:
    """One measured value of a call."""

    name: str  # the value in URLs, API rows and rollup fields: "ttft"
    label: str  # for people choosing it: "Time to first token"
    short: str  # in chart titles and hover text: "TTFT"
    unit: str  # "ms", "tok/s", "tokens"
    column: str  # the Measurement column and engine result field: "ttft_ms"
    # Position in the life of a call (measurements.csv and the phase chart
    # follow it); ties never happen.
    step: int
    kind: str = "float"  # "float" | "int": how ingest validates it
    # Rollups keep a mergeable histogram of it (field `<name>_hist`).
    histogram: bool = False
    # Offered in the dashboard's metric selector (in the order of METRICS).
    selectable: bool = False
    # A column of regions.csv per percentile (`<name>_<pN>_ms`).
    region_csv: bool = False
    # A column of measurements.csv (its column name is `column`).
    measurement_csv: bool = False
    # A milestone of the phase breakdown (dns, connect, tls, ttfb, ttft, total).
    phase: bool = False
    # A rate, where more is better: rankings put the largest first and colour
    # scales turn round (every other metric is a time or a count).
    higher_is_better: bool = False
    # Values above this are not measurements of the metric, whatever sent
    # them: ingest stores NULL instead (probes.ingest) and says so.
    ceiling: float | None = None
    # Real users report it too (probes.realusers): ObservationRollup keeps `<name>_hist` of it, and the real-user
    # readers, CSV and page columns iterate REAL_USERS.
    real_users: bool = False
    # Exposed on /metrics (probes.exposition) as the last result of each target x region under
    # `latency_atlas_probe_<prometheus>`, in Prometheus' base unit (PROMETHEUS_SCALE): "ttft_seconds".
    prometheus: str = ""
    # Also kept as a cumulative Prometheus histogram, tallied at ingest (probes.tally), with trailing-window
    # quantile gauges: `latency_atlas_<prometheus>` and `latency_atlas_<name>_quantile_seconds`. One metric only.
    prometheus_histogram: bool = False

    @property
    def rollup_field(self) -> str | None:
        return f"{self.name}_hist" if self.histogram else None

    @property
    def axis_title(self) -> str:
        return f"{self.short} ({self.unit})"

    def region_csv_columns(self) -> tuple[str, ...]:
        return tuple(f"{self.name}_{p}_ms" for p in PERCENTILES) if self.region_csv else ()


# Tokens per second one stream can plausibly show. The fastest single-stream
# decode published by 2026 is in the low thousands of tok/s (Cerebras and
# Groq serve 8B-120B models at about 1,000-3,000 tok/s to one user; hard-wired
# inference chips claim up to about 17,000 for an 8B model). A hundred
# thousand leaves a factor of five above the most extreme claim; what lies
# beyond is an artefact of timing (a whole stream stamped by one or two
# socket reads: see probes.engine's rate rule), never a model's speed.
TOKENS_PER_S_CEILING = 100_000.0

# In the dashboard's order (the selector lists the selectable ones in it).
METRICS: tuple[Metric, ...] = (
    Metric("ttft", "Time to first token", "TTFT", "ms", "ttft_ms", step=6,
           histogram=True, selectable=True, region_csv=True, measurement_csv=True, phase=True, real_users=True,
           prometheus="ttft_seconds", prometheus_histogram=True),
    Metric("ttfat", "Time to first answer token", "TTFAT", "ms", "ttfat_ms", step=7,
           histogram=True, selectable=True, region_csv=True, measurement_csv=True, prometheus="ttfat_seconds"),
    Metric("ttfb", "Time to first byte", "TTFB", "ms", "ttfb_ms", step=4,
           histogram=True, selectable=True, region_csv=True, measurement_csv=True, phase=True),
    Metric("connect", "TCP connect", "TCP connect", "ms", "connect_ms", step=2,
           histogram=True, selectable=True, region_csv=True, measurement_csv=True, phase=True),
    Metric("tls", "TLS handshake", "TLS handshake", "ms", "tls_ms", step=3,
           histogram=True, selectable=True, measurement_csv=True, phase=True),
    Metric("total", "Total time", "total time", "ms", "total_ms", step=8,
           histogram=True, selectable=True, region_csv=True, measurement_csv=True, phase=True, real_users=True),
    Metric("dns", "DNS lookup", "DNS", "ms", "dns_ms", step=1,
           histogram=True, measurement_csv=True, phase=True),
    # A histogram like the latencies (the bucket layout has no unit), so its
    # percentiles exist at every window. Higher is better (probes.readings'
    # ranking), and values past TOKENS_PER_S_CEILING are not stored.
    Metric("tokens_per_s", "Tokens per second", "tokens/s", "tok/s", "tokens_per_s", step=10,
           histogram=True, selectable=True, measurement_csv=True, ceiling=TOKENS_PER_S_CEILING, higher_is_better=True,
           prometheus="tokens_per_second"),
    Metric("first_event", "First stream event", "first event", "ms", "first_event_ms", step=5),
    # From the start to the request's last byte written (a long prompt's upload, apart from prefill).
    # measurements.csv appends it (APPENDED_CSV) rather than moving the older columns.
    Metric("request_sent", "Request sent", "request sent", "ms", "request_sent_ms", step=14),
    # A cached pair's first call's TTFT, the one that filled the provider's prompt cache (probes.engine.workloads).
    Metric("warm_ttft", "TTFT of the call filling the cache", "cache-filling TTFT", "ms", "warm_ttft_ms", step=15),
    Metric("output_tokens", "Output tokens", "output tokens", "tokens", "output_tokens", step=9,
           kind="int", measurement_csv=True),
    Metric("itl_p50", "Inter-token latency p50", "ITL p50", "ms", "itl_p50_ms", step=11, measurement_csv=True),
    Metric("itl_p95", "Inter-token latency p95", "ITL p95", "ms", "itl_p95_ms", step=12),
    Metric("itl_max", "Inter-token latency max", "ITL max", "ms", "itl_max_ms", step=13),
)  # fmt: skip

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}
BY_COLUMN: dict[str, Metric] = {m.column: m for m in METRICS}
SELECTABLE: tuple[Metric, ...] = tuple(m for m in METRICS if m.selectable)
HISTOGRAM: tuple[Metric, ...] = tuple(m for m in METRICS if m.histogram)
HISTOGRAM_NAMES: tuple[str, ...] = tuple(m.name for m in HISTOGRAM)
REGION_CSV: tuple[Metric, ...] = tuple(m for m in METRICS if m.region_csv)
MEASUREMENT_CSV: tuple[Metric, ...] = tuple(sorted((m for m in METRICS if m.measurement_csv), key=lambda m: m.step))
REAL_USERS: tuple[Metric, ...] = tuple(m for m in METRICS if m.real_users)
PHASES: tuple[Metric, ...] = tuple(sorted((m for m in METRICS if m.phase), key=lambda m: m.step))
PROMETHEUS: tuple[Metric, ...] = tuple(m for m in METRICS if m.prometheus)
# The metric /metrics keeps a cumulative histogram of (probes.tally has its columns): exactly one.
(PROMETHEUS_HISTOGRAM,) = tuple(m for m in METRICS if m.prometheus_histogram)
# From a metric's unit to Prometheus' base unit (seconds; rates as they are).
PROMETHEUS_SCALE: dict[str, float] = {"ms": 0.001, "tok/s": 1.0}

# The product's percentiles (selector, API, regions.csv), one set. Exact
# decimals for SQL: a float8 0.95 times n can round past an integer rank.
PERCENTILES: dict[str, float] = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}
EXACT: dict[float, Decimal] = {q: Decimal(str(q)) for q in PERCENTILES.values()}


# The SQL condition of a row (alias `m`, or none) that may give latency samples: not refused for capacity
# (probes.engine.result.REFUSED). Every reader and rollup that buckets or ranks a metric's values applies it, so a
# burst of quick refusals (HTTP 429 answers) never pulls a percentile down.
def latency_row_sql(alias: str = "") -> str:
    a = f"{alias}." if alias else ""
    return f"{a}outcome NOT IN ({', '.join(repr(o) for o in REFUSED)})"


def latency_sql(column: str, alias: str = "") -> str:
    """A metric column as a latency sample: NULL on a refused row (latency_row_sql)."""
    a = f"{alias}." if alias else ""
    return f"CASE WHEN {latency_row_sql(alias)} THEN {a}{column} END"


def metric(name: str) -> Metric:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}") from None


@dataclass(frozen=True)
class StoredField:
    """A stored field of a measurement that is not a metric."""

    name: str
    kind: str  # "float" | "int" | "text" (ingest's own fields: see probes.ingest.clean)
    # int: exclusive upper bound (the column's type: a larger value would fail
    # the whole batch's INSERT); text: characters kept.
    limit: int | None = None
    # A column of measurements.csv, after every earlier one (so that readers of the older layout keep theirs).
    measurement_csv: bool = False


OTHER_FIELDS: tuple[StoredField, ...] = (
    StoredField("retry_after_s", "float"),
    StoredField("http_status", "int", 2**15),  # smallint
    StoredField("response_bytes", "int", 2**31),
    StoredField("error", "text", 2000),
    StoredField("error_type", "text", 120),
    StoredField("http_version", "text", 16),
    StoredField("remote_addr", "text", 64),
    # The provider's token counts and rate-limit headroom (issue 50), as the engine reads them.
    StoredField("workload", "text", 16, measurement_csv=True),
    StoredField("input_tokens", "int", 2**31, measurement_csv=True),
    StoredField("cached_input_tokens", "int", 2**31, measurement_csv=True),
    StoredField("cache_write_tokens", "int", 2**31, measurement_csv=True),
    StoredField("reasoning_tokens", "int", 2**31, measurement_csv=True),
    StoredField("ratelimit_remaining_requests", "int", 2**31, measurement_csv=True),
    StoredField("ratelimit_remaining_tokens", "int", 2**31, measurement_csv=True),
)
# measurements.csv's columns after `error`, issue 50's, in this order.
APPENDED_CSV: tuple[str, ...] = (
    "request_sent_ms",
    "warm_ttft_ms",
    *(f.name for f in OTHER_FIELDS if f.measurement_csv),
)
# Engine result fields ingest stores with rules of their own (probes.ingest.clean).
SPECIAL_FIELDS = ("outcome", "connection", "tokens_estimated", "started_at")
# Engine result fields deliberately not stored, each with its reason.
IGNORED_ENGINE_FIELDS: dict[str, str] = {
    "start_ns": "a monotonic clock reading of the worker's host, meaningless anywhere else (to_dict drops it)",
}


def stored_engine_fields() -> tuple[str, ...]:
    return (*SPECIAL_FIELDS, *(m.column for m in METRICS), *(f.name for f in OTHER_FIELDS))


def unaccounted_engine_fields(names: Iterable[str]) -> list[str]:
    """Engine result fields that ingest neither stores nor ignores on purpose."""
    known = set(stored_engine_fields()) | set(IGNORED_ENGINE_FIELDS)
    return [name for name in names if name not in known]
