"""What the engine reads of a provider's usage and limits is stored as sent: the token counts and the headroom, NULL
where the provider said nothing; a 429 and an overload keep their own outcomes; a count past its column is
dead-lettered with its reason, the rest of the batch stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import store
from probes.models import DeadLetter, Measurement
from tests.factories import measurement_payload as payload

BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
COUNTS = {
    "workload": "cached_pair",
    "warm_ttft_ms": 812.25,
    "request_sent_ms": 14.5,
    "input_tokens": 100_412,
    "cached_input_tokens": 99_840,
    "cache_write_tokens": 0,
    "reasoning_tokens": 17,
    "ratelimit_remaining_requests": 4_999,
    "ratelimit_remaining_tokens": 1_899_582,
}


@pytest.fixture
def where(make_probe):
    """A probe and its one region."""
    probe = make_probe()
    return probe, probe.regions.get()


def test_the_counts_and_headroom_are_stored_as_sent(where):
    probe, region = where
    store([payload(probe, region, BASE, **COUNTS), payload(probe, region, BASE + timedelta(minutes=1))])
    told, silent = Measurement.objects.order_by("scheduled_for")
    assert {name: getattr(told, name) for name in COUNTS} == COUNTS
    # Zero is a count the provider gave; nothing said is NULL.
    assert all(getattr(silent, name) is None for name in COUNTS if name != "workload")
    assert silent.workload == "short"


@pytest.mark.parametrize("outcome", ["rate_limited", "overloaded"])
def test_a_rate_limited_or_overloaded_call_keeps_its_outcome(where, outcome):
    probe, region = where
    store([payload(probe, region, BASE, outcome=outcome, http_status=429, ttft_ms=None, retry_after_s=12.0)])
    row = Measurement.objects.get()
    assert (row.outcome, row.retry_after_s) == (outcome, 12.0)


def test_a_count_past_its_column_is_dead_lettered_and_the_rest_stored(where):
    probe, region = where
    items = store(
        [
            payload(probe, region, BASE, input_tokens=2**31),
            payload(probe, region, BASE + timedelta(minutes=1), input_tokens=12),
        ]
    )
    assert list(Measurement.objects.values_list("input_tokens", flat=True)) == [12]
    letter = DeadLetter.objects.get()
    assert "input_tokens" in letter.reason
    assert len(items) == 1
