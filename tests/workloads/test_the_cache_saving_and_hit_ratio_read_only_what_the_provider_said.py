"""The cache saving is the median of warm_ttft_ms - ttft_ms over ok cached pairs with both; the hit ratio is the
share of ok cached pairs with cached input tokens above 0 among those whose provider reported a count. A provider
that reports no count has no hit ratio (None, never 0)."""

from __future__ import annotations

from datetime import timedelta

from probes import readings
from tests.workloads.conftest import failed


def pair(saving: float | None, cached: int | None, ttft: float = 300.0) -> dict:
    warm = None if saving is None else ttft + saving
    return {"workload": "cached_pair", "input_tokens": 10_000, "ttft_ms": ttft, "warm_ttft_ms": warm,
            "cached_input_tokens": cached}  # fmt: skip


def test_the_saving_median_and_hit_ratio_of_the_ok_cached_pairs(make_probe, make_region, add_calls, now):
    region = make_region()
    probe = make_probe(regions=[region])
    since = now - timedelta(hours=1)
    add_calls(probe, region, since, [
        pair(100, 9_000), pair(500, 9_000), pair(300, 0), pair(200, None), pair(400, 9_000),
        pair(None, 9_000),  # its first call's TTFT is missing: no saving, but a hit
        failed("rate_limited", workload="cached_pair", cached_input_tokens=None),
        # Not a cached pair: its cached count says nothing of the pair's cache.
        {"workload": "prompt_10k", "input_tokens": 10_000, "cached_input_tokens": 0, "warm_ttft_ms": None},
    ])  # fmt: skip

    (reading,) = readings.workloads([probe.target_id], since, now).regions
    cache = reading.cache
    assert cache.calls == 6
    assert cache.saving_n == 5
    assert cache.saving_p50_ms == 300.0
    assert (cache.reported, cache.hits) == (5, 4)
    assert cache.hit_ratio == 4 / 5


def test_no_reported_cached_count_means_no_hit_ratio(make_probe, make_region, add_calls, now):
    region = make_region()
    probe = make_probe(regions=[region])
    since = now - timedelta(hours=1)
    add_calls(probe, region, since, [pair(250, None), pair(350, None)])

    (reading,) = readings.workloads([probe.target_id], since, now).regions
    assert reading.cache.hit_ratio is None
    assert reading.cache.reported == 0
    assert reading.cache.saving_p50_ms == 250.0  # nearest rank of two: the first


def test_a_target_without_cached_pairs_has_no_cache_figures(make_probe, make_region, add_calls, now):
    region = make_region()
    probe = make_probe(regions=[region])
    since = now - timedelta(hours=1)
    add_calls(probe, region, since, [{"workload": "short", "cached_input_tokens": 0}])

    (reading,) = readings.workloads([probe.target_id], since, now).regions
    assert (reading.cache.calls, reading.cache.saving_p50_ms, reading.cache.hit_ratio) == (0, None, None)
