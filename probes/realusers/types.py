"""What the receivers hand the store: plain dataclasses, no Django."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Place:
    """Where a user was, at city resolution. Empty strings and None when unknown."""

    country: str = ""  # ISO 3166-1 alpha-2, upper case
    city: str = ""
    latitude: float | None = None
    longitude: float | None = None
    source: str = "none"  # one of probes.realusers.models.PLACE_SOURCES

    @property
    def known(self) -> bool:
        return bool(self.country or self.city or self.latitude is not None)


NOWHERE = Place()


@dataclass
class Observed:
    """One call (a GenAI span or a beacon), ready to store. Times in ms; None when not reported."""

    kind: str  # "span" | "beacon"
    observed_at: datetime  # UTC
    place: Place = NOWHERE
    provider: str = ""
    host: str = ""
    model: str = ""
    operation: str = ""
    service: str = ""
    ttft_ms: float | None = None
    ttft_from: str = ""
    total_ms: float | None = None
    output_tokens: int | None = None
    error_type: str = ""
    # Set by the store's matching; a receiver may name it (the beacon's data-target).
    target_id: int | None = None


@dataclass
class ObservedHistogram:
    """Calls counted by an OTLP histogram point (already made a delta), for one metric of
    probes.metrics.REAL_USERS: `values` are representative values in ms with their counts (one per
    non-empty OTLP bucket), merged into the rollup's histogram."""

    metric: str  # "ttft" | "total"
    hour_of: datetime  # the point's time (UTC); its hour is the rollup's
    place: Place = NOWHERE
    host: str = ""
    model: str = ""
    provider: str = ""
    counts: list[tuple[float, int]] = field(default_factory=list)
    errors: int = 0  # calls among them with error.type set (counted once, on the "total" metric)
    target_id: int | None = None

    @property
    def count(self) -> int:
        return sum(n for _, n in self.counts)


@dataclass
class Stored:
    """What one store call did, for the receiver's answer and its counters."""

    observations: int = 0
    histogram_calls: int = 0
    matched: int = 0
