"""A call the provider refused for capacity (rate_limited: HTTP 429; overloaded: 529 or a 503 saying so) leaves
the denominator of an objective that excludes rate-limited calls, and is bad, as any failed call, in one that
does not. Other failures stay bad in both. Ingest's counting and a rebuild from raw rows agree."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes.engine.result import REFUSED
from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, current, hour_ago, ingest

# What a refused call carries: a status, a quick answer, no token.
REFUSED_FIELDS = {
    "ttfb_ms": 40.0,
    "first_event_ms": None,
    "ttft_ms": None,
    "total_ms": 41.0,
    "output_tokens": 0,
    "tokens_per_s": None,
    "itl_p50_ms": None,
    "itl_p95_ms": None,
    "itl_max_ms": None,
}


@pytest.mark.django_db(transaction=True)
def test_refused_calls_are_excluded_only_where_the_objective_excludes_them():
    assert set(REFUSED) == {"rate_limited", "overloaded"}
    probe = ProbeFactory()
    region = probe.regions.get()
    start = hour_ago()
    excluding = current(
        ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500, exclude_rate_limited=True)
    )
    counting = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    assert counting.exclude_rate_limited is False  # the default: refused calls are bad
    calls = [
        (start, {"ttft_ms": 200.0}),
        (start + timedelta(minutes=1), {"ttft_ms": 900.0}),
        (start + timedelta(minutes=2), {**REFUSED_FIELDS, "outcome": "rate_limited", "http_status": 429}),
        (start + timedelta(minutes=3), {**REFUSED_FIELDS, "outcome": "rate_limited", "http_status": 429}),
        (start + timedelta(minutes=4), {**REFUSED_FIELDS, "outcome": "overloaded", "http_status": 529}),
        (start + timedelta(minutes=5), {**REFUSED_FIELDS, "outcome": "http_error", "http_status": 500}),
        (start + timedelta(minutes=6), {**REFUSED_FIELDS, "outcome": "timeout", "http_status": None}),
    ]
    assert ingest(probe, region, calls) == 7
    assert counts(excluding) == {"good": 1, "degraded": 0, "bad": 3, "missed": 0, "excluded": 3}
    assert counts(counting) == {"good": 1, "degraded": 0, "bad": 6, "missed": 0, "excluded": 0}

    rebuild(excluding.id)
    rebuild(counting.id)
    assert counts(excluding) == {"good": 1, "degraded": 0, "bad": 3, "missed": 0, "excluded": 3}
    assert counts(counting) == {"good": 1, "degraded": 0, "bad": 6, "missed": 0, "excluded": 0}
