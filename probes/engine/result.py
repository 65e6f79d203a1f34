"""The probe spec (what to call) and the measurement (what happened).

Both are plain data: the spec travels through the broker as a dict, the
result comes back as a dict, and the field names here are the product's
contract (database columns, CSV columns, `probe --json`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from probes.engine.providers import PROVIDER_KEYS
from probes.engine.workloads import SHORT, WORKLOADS

# One place defines the outcome names.
OK = "ok"
DNS_ERROR = "dns_error"
CONNECT_ERROR = "connect_error"
TLS_ERROR = "tls_error"
TIMEOUT = "timeout"
HTTP_ERROR = "http_error"
# HTTP 429, or a rate_limit_error in the stream: the provider's limits, not its speed. Never a latency sample.
RATE_LIMITED = "rate_limited"
# Anthropic's HTTP 529 overloaded_error (or that error in the stream), a 503 whose body says overloaded.
OVERLOADED = "overloaded"
UPSTREAM_ERROR = "upstream_error"
TRUNCATED = "truncated"
PROTOCOL_ERROR = "protocol_error"
# The probe as configured cannot be sent (missing CA file, a header or key that
# HTTP cannot carry, a malformed host): a stored result, never a crash.
CONFIG_ERROR = "config_error"

OUTCOMES = (
    OK,
    DNS_ERROR,
    CONNECT_ERROR,
    TLS_ERROR,
    TIMEOUT,
    HTTP_ERROR,
    RATE_LIMITED,
    OVERLOADED,
    UPSTREAM_ERROR,
    TRUNCATED,
    PROTOCOL_ERROR,
    CONFIG_ERROR,
)
# The provider refused the call for capacity (its limits or its load): such a call counts in the error rate and as
# a series of its own, never as a latency sample (probes.metrics.latency_sql), and objectives may exclude it.
REFUSED = (RATE_LIMITED, OVERLOADED)

STYLES = ("openai", "responses", "anthropic", "gemini", "http")

# The HTTP version a target asks for. "1.1" (the default, what the official
# Python SDKs speak); "2": offer h2 over ALPN and measure over whatever the
# server picks, noting a fallback to 1.1 with its reason; "2-only": a server
# that refuses h2 is a failed call (protocol_error, reason stored), nothing
# is sent over 1.1. HTTP/2 is only negotiated over TLS (no cleartext h2c).
HTTP_1_1 = "1.1"
HTTP_2 = "2"
HTTP_2_ONLY = "2-only"
HTTP_VERSIONS = (HTTP_1_1, HTTP_2, HTTP_2_ONLY)

COLD = "cold"
WARM = "warm"
CONNECTIONS = (COLD, WARM)

DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ProbeSpec:
    """Everything the engine needs for one call. Never holds a secret:
    `api_key_env` names the environment variable the key is read from."""

    url: str
    style: str = "openai"
    model: str = ""
    prompt: str = "Say hello in five words."
    max_tokens: int = 64
    headers: dict[str, str] = field(default_factory=dict)
    api_key_env: str = ""
    timeout_s: float = 30.0
    connection: str = COLD
    method: str = ""  # http style only; GET when empty
    body: str = ""  # http style only
    ca_bundle: str = ""  # PEM file of extra trusted CAs (a local test CA, a corporate proxy)
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    # Emulated geography (the single-machine demo): the round trip this
    # region would pay to the target's hosting location, and its jitter,
    # added at the socket level. 0 = a real network, nothing added.
    emulated_rtt_ms: float = 0.0
    emulated_jitter_ms: float = 0.0
    # See HTTP_VERSIONS. A spec sent by an older central site has no such
    # key: from_dict then leaves the default, 1.1.
    http_version: str = HTTP_1_1
    # A provider preset's key (probes.engine.providers), "" for a custom
    # target: it decides the request's shape where providers differ (the
    # key's header, whether stream_options may be sent).
    provider: str = ""
    # See probes.engine.workloads: the prompt's length and whether the call is a cached pair. A spec from an older
    # central site has no such key and sends the short prompt.
    workload: str = SHORT

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)} (got {self.style!r})")
        if self.connection not in CONNECTIONS:
            raise ValueError(f"connection must be cold or warm (got {self.connection!r})")
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https:// (got {self.url!r})")
        if self.http_version not in HTTP_VERSIONS:
            raise ValueError(f"http_version must be one of {', '.join(HTTP_VERSIONS)} (got {self.http_version!r})")
        if self.provider and self.provider not in PROVIDER_KEYS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDER_KEYS)} or empty (got {self.provider!r})")
        if self.workload not in WORKLOADS:
            raise ValueError(f"workload must be one of {', '.join(WORKLOADS)} (got {self.workload!r})")
        if self.timeout_s <= 0:
            raise ValueError("timeout must be positive")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        # Written as `not >= 0` so NaN is rejected too.
        if not self.emulated_rtt_ms >= 0 or not self.emulated_jitter_ms >= 0:
            raise ValueError("emulated delays must be non-negative")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeSpec:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Measurement:
    """One call's outcome and timings. Milliseconds as floats rounded to the
    microsecond; None means the phase did not happen (never 0)."""

    outcome: str = OK
    error: str | None = None
    error_type: str | None = None  # the provider's own error type, e.g. rate_limit_error
    workload: str = SHORT  # the spec's (probes.engine.workloads)
    retry_after_s: float | None = None
    started_at: str | None = None  # UTC ISO 8601 wall clock of the call's start
    http_status: int | None = None
    http_version: str | None = None
    remote_addr: str | None = None
    connection: str = COLD
    dns_ms: float | None = None
    connect_ms: float | None = None
    tls_ms: float | None = None
    request_sent_ms: float | None = None
    ttfb_ms: float | None = None
    first_event_ms: float | None = None
    ttft_ms: float | None = None
    ttfat_ms: float | None = None
    # A cached pair's first call's TTFT (the one that filled the provider's cache): the saving is this less ttft_ms.
    warm_ttft_ms: float | None = None
    total_ms: float | None = None
    output_tokens: int | None = None
    tokens_estimated: bool | None = None
    # As the provider reports them (NULL where it does not): every input token, cached ones included; those read
    # from its prompt cache; those written to it (Anthropic); the reasoning among the output tokens.
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    # The provider's headroom when it says (x-ratelimit-remaining-*, anthropic-ratelimit-*-remaining).
    ratelimit_remaining_requests: int | None = None
    ratelimit_remaining_tokens: int | None = None
    tokens_per_s: float | None = None
    itl_p50_ms: float | None = None
    itl_p95_ms: float | None = None
    itl_max_ms: float | None = None
    response_bytes: int | None = None
    # perf_counter_ns() (CLOCK_MONOTONIC on Linux) at the call's start: lets a
    # benchmark line our milestones up with a server's own timestamps.
    # Not part of the stored record.
    start_ns: int | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("start_ns")
        return data


MEASUREMENT_FIELDS = tuple(f.name for f in dataclasses.fields(Measurement) if f.name != "start_ns")
