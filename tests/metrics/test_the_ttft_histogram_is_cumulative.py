"""latency_atlas_ttft_seconds is a real Prometheus histogram: cumulative buckets that agree with the stored TTFT
values, +Inf equal to _count, _sum in seconds, summed over outcomes (but a
call refused for capacity, never a latency sample), so histogram_quantile() works on it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.tally import BUCKETS_S
from tests.metrics.conftest import families, samples


@pytest.mark.django_db
def test_buckets_count_the_stored_values_at_or_under_each_bound(make_probe, stored, scrape_client, metrics_token):
    probe = make_probe()
    region = probe.regions.get()
    when = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    values = [40.0, 100.0, 100.5, 480.0, 1000.0, 2600.0, 75_000.0]
    for i, ttft in enumerate(values):
        stored(probe, region, when + timedelta(minutes=i), ttft_ms=ttft)
    # A failure with a first token (the stream broke later) counts in the histogram; one without does not.
    stored(probe, region, when + timedelta(minutes=10), outcome="truncated", ttft_ms=300.0)
    stored(probe, region, when + timedelta(minutes=11), outcome="timeout", ttft_ms=None)
    values.append(300.0)
    # A first token then a rate_limit_error in the stream: counted as a call, never as a latency sample.
    stored(probe, region, when + timedelta(minutes=12), outcome="rate_limited", ttft_ms=5.0)

    parsed = families(scrape_client(token=metrics_token).content.decode())
    pair = {"target": probe.target.name, "region": region.slug}
    buckets = {float(labels["le"]): v for labels, v in samples(parsed, "latency_atlas_ttft_seconds_bucket")}
    expected = {bound: float(sum(v / 1000 <= bound for v in values)) for bound in BUCKETS_S}
    expected[float("inf")] = float(len(values))
    assert buckets == expected
    assert buckets[0.1] == 2.0  # 100 ms is at most 0.1 s: le is inclusive
    ordered = [buckets[b] for b in sorted(buckets)]
    assert ordered == sorted(ordered)
    assert samples(parsed, "latency_atlas_ttft_seconds_count") == [(pair, float(len(values)))]
    assert samples(parsed, "latency_atlas_ttft_seconds_sum") == [(pair, pytest.approx(sum(values) / 1000))]
    outcomes = {labels["outcome"]: v for labels, v in samples(parsed, "latency_atlas_measurements_total")}
    assert outcomes == {"ok": 7.0, "truncated": 1.0, "timeout": 1.0, "rate_limited": 1.0}
