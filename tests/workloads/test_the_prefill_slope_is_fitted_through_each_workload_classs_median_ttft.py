"""Each workload class's median TTFT and input tokens are the nearest-rank medians of its ok calls, and the
prefill line goes through them: from classes whose medians lie on TTFT = 200 ms + 0.5 ms per input token, the
reading recovers 500 ms per 1k input tokens and 2,000 tokens/s, whatever the classes' spread around their medians,
their failed calls, a class with too few calls and the cached pairs (which are off the line)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes import readings
from probes.readings.rank import float_rank_agrees
from probes.readings.workloads import MEDIAN_VALUES_MAX, MIN_FIT_CALLS
from tests.workloads.conftest import failed


def on_line(tokens: float) -> float:
    return 200.0 + 0.5 * tokens


def spread(workload: str, tokens: int, offsets: list[float]) -> list[dict]:
    """ok calls of one class whose TTFTs lie at offsets (ms) around the line at `tokens`; inputs likewise."""
    return [{"workload": workload, "input_tokens": tokens + int(d), "ttft_ms": on_line(tokens) + d} for d in offsets]


@pytest.fixture
def window(now):
    return now - timedelta(hours=1), now


def test_the_fit_recovers_the_slope_and_prefill_rate_of_the_classes_medians(make_probe, make_region, add_calls,
                                                                             window):  # fmt: skip
    region = make_region(slug="fra", name="Frankfurt")
    probe = make_probe(regions=[region])
    since, until = window
    rows = [
        # Six values: the nearest-rank median is the 3rd (210 ms), not the mean of the middle two (305 ms).
        *[{"workload": "short", "input_tokens": 20, "ttft_ms": t} for t in (190, 200, 210, 400, 410, 420)],
        *spread("prompt_1k", 1000, [-30, -20, -10, 0, 10, 20, 30]),
        *spread("prompt_10k", 10_000, [-300, -100, 0, 100, 900]),
        *spread("prompt_100k", 100_000, [-5000, -1000, 0, 1000, 2000]),
        # Refused calls count as calls, never as times.
        failed("rate_limited", workload="prompt_100k"),
        failed("overloaded", workload="prompt_100k"),
        # A cached pair's TTFT is the cache's: far below the line, and not in the fit.
        *[{"workload": "cached_pair", "input_tokens": 10_000, "ttft_ms": 300.0, "warm_ttft_ms": 5200.0}] * 6,
    ]
    add_calls(probe, region, since + timedelta(minutes=5), rows)

    (reading,) = readings.workloads([probe.target_id], since, until).regions
    by_class = {c.workload: c for c in reading.classes}
    assert [c.workload for c in reading.classes] == ["short", "prompt_1k", "prompt_10k", "prompt_100k", "cached_pair"]
    assert by_class["short"].ttft_p50_ms == 210.0
    assert by_class["short"].input_tokens_p50 == 20
    assert by_class["prompt_1k"].ttft_p50_ms == on_line(1000)
    assert by_class["prompt_10k"].ttft_p50_ms == on_line(10_000)
    assert by_class["prompt_100k"].calls == 7
    assert by_class["prompt_100k"].ok == 5
    assert by_class["prompt_100k"].rate_limited == 2
    assert by_class["prompt_100k"].ttft_p50_ms == on_line(100_000)
    assert by_class["prompt_100k"].input_tokens_p50 == 100_000

    fit = reading.fit
    assert fit.points == 4
    assert fit.slope_ms_per_1k == pytest.approx(500.0)
    assert fit.intercept_ms == pytest.approx(200.0)
    assert fit.prefill_tokens_per_s == pytest.approx(2000.0)
    assert fit.reason == ""


def test_a_class_with_too_few_ok_calls_stays_out_of_the_fit(make_probe, make_region, add_calls, window):
    region = make_region()
    probe = make_probe(regions=[region])
    since, until = window
    few = [{"workload": "prompt_100k", "input_tokens": 100_000, "ttft_ms": 90_000.0}] * (MIN_FIT_CALLS - 1)
    add_calls(probe, region, since, [*spread("short", 20, [0] * 5), *spread("prompt_10k", 10_000, [0] * 5), *few])

    (reading,) = readings.workloads([probe.target_id], since, until).regions
    assert reading.fit.points == 2
    assert reading.fit.slope_ms_per_1k == pytest.approx(500.0)


def test_one_class_or_a_falling_line_gives_no_rate_and_says_why(make_probe, make_region, add_calls, window):
    one, falling = make_region(name="A"), make_region(name="B")
    probe = make_probe(regions=[one, falling])
    since, until = window
    add_calls(probe, one, since, spread("prompt_10k", 10_000, [0] * 6))
    add_calls(probe, falling, since, [
        *[{"workload": "short", "input_tokens": 20, "ttft_ms": 900.0}] * 5,
        *[{"workload": "prompt_1k", "input_tokens": 1000, "ttft_ms": 400.0}] * 5,
    ])  # fmt: skip

    by_region = {r.region_name: r for r in readings.workloads([probe.target_id], since, until).regions}
    lone = by_region["A"].fit
    assert (lone.points, lone.slope_ms_per_1k, lone.prefill_tokens_per_s) == (1, None, None)
    assert "fewer than two workload classes" in lone.reason
    down = by_region["B"].fit
    assert (down.points, down.slope_ms_per_1k, down.prefill_tokens_per_s) == (2, None, None)
    assert "does not grow" in down.reason


def test_a_target_or_region_outside_the_selection_is_not_read(make_probe, make_region, add_calls, window):
    here, there = make_region(), make_region()
    probe, other = make_probe(regions=[here, there]), make_probe(regions=[here])
    since, until = window
    add_calls(probe, here, since, spread("short", 20, [0]))
    add_calls(probe, there, since, spread("short", 20, [0]))
    add_calls(other, here, since, spread("short", 20, [0]))
    add_calls(probe, here, until, spread("short", 20, [0]))  # at until: outside [since, until)

    read = readings.workloads([probe.target_id], since, until, region_ids=[here.id])
    assert [(r.target_id, r.region, r.calls) for r in read.regions] == [(probe.target_id, here.slug, 1)]


def test_a_window_longer_than_seven_days_is_refused_naming_since(now):
    with pytest.raises(readings.BadParameter) as refused:
        readings.workloads([1], now - timedelta(days=7, seconds=1), now)
    assert refused.value.param == "since"


def test_the_median_ranks_exactly_in_float8_at_every_count_a_window_holds():
    assert float_rank_agrees(0.5, MEDIAN_VALUES_MAX)
