"""Real users' calls for the page tests, stored as the receivers store them (probes.realusers.store.record)."""

from __future__ import annotations

from datetime import datetime, timedelta

from probes.realusers import matching
from probes.realusers.store import record
from probes.realusers.types import Observed, Place

LAGOS = Place("NG", "Lagos", 6.45, 3.4, "attributes")
IBADAN = Place("NG", "Ibadan", 7.38, 3.93, "attributes")
LONDON = Place("GB", "London", 51.51, -0.13, "attributes")


def calls(
    source_id: int,
    n: int,
    at: datetime,
    place: Place = LAGOS,
    *,
    host: str = "api.example.com",
    model: str = "gpt-4o",
    ttft_ms: float | list[float] = 900.0,
    total_ms: float = 2000.0,
    errors: int = 0,
) -> None:
    """n calls a minute apart from `at`, from `place`, to host and model (a target's when they match one)."""
    matching.forget()
    ttfts = ttft_ms if isinstance(ttft_ms, list) else [ttft_ms] * n
    record(
        source_id,
        [
            Observed(
                "span",
                at + timedelta(seconds=30 * i),
                place,
                host=host,
                model=model,
                ttft_ms=ttfts[i],
                total_ms=total_ms,
                error_type="500" if i < errors else "",
            )
            for i in range(n)
        ],
    )
