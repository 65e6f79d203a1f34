"""The leaderboard's 95 % intervals: the ranks l and u agree with a direct, exact computation of the binomial
distribution (fractions, no floats), and the values at those ranks are the samples' own order statistics on a
raw window and the histogram's buckets holding those ranks on a longer one."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from math import comb

import pytest

from probes.histogram import histogram_of
from probes.models import Measurement
from probes.readings import Selection, leaderboard
from probes.readings.leaderboard import interval_ranks, minimum_values
from tests.factories import MeasurementFactory, ModelGroupFactory, ProbeFactory

TAIL = Fraction(1, 40)  # (1 - 0.95) / 2


def exact_cdf(n: int, q: Fraction) -> list[Fraction]:
    out, total = [], Fraction(0)
    for k in range(n + 1):
        total += comb(n, k) * q**k * (1 - q) ** (n - k)
        out.append(total)
    return out


def exact_ranks(n: int, q: Fraction) -> tuple[int, int] | None:
    cdf = exact_cdf(n, q)
    lows = [k + 1 for k in range(n) if cdf[k] <= TAIL]
    highs = [u for u in range(1, n + 1) if 1 - cdf[u - 1] <= TAIL]
    return (lows[-1], highs[0]) if lows and highs else None


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(9, 10), Fraction(19, 20)])
def test_the_ranks_equal_the_exact_binomial_ranks(q):
    for n in [*range(1, 90), 150, 400]:
        assert interval_ranks(n, float(q)) == exact_ranks(n, q), n


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(19, 20)])
def test_each_interval_covers_at_least_95_percent(q):
    for n in (80, 250, 1000):
        ranks = interval_ranks(n, float(q))
        assert ranks is not None
        low, high = ranks
        cdf = exact_cdf(n, q)
        # P(l <= B < u) = P(B <= u - 1) - P(B <= l - 1)
        assert cdf[high - 1] - cdf[low - 1] >= Fraction(95, 100)


def test_the_fewest_values_are_the_first_n_with_ranks():
    for q in (0.5, 0.95):
        need = minimum_values(q)
        assert interval_ranks(need, q) is not None
        assert interval_ranks(need - 1, q) is None
    assert exact_ranks(minimum_values(0.95) - 1, Fraction(19, 20)) is None


def _store(n: int, start: datetime, span: timedelta, seed: int) -> tuple[int, list[float]]:
    rng = random.Random(seed)
    probe = ProbeFactory()
    region = probe.regions.get()
    values = [rng.lognormvariate(5.5, 0.6) for _ in range(n)]
    Measurement.objects.bulk_create(
        MeasurementFactory.build(probe=probe, region=region, scheduled_for=start + span * (i / n), ttft_ms=v)
        for i, v in enumerate(values)
    )
    return probe.target_id, values


@pytest.mark.django_db
def test_a_raw_window_reads_the_samples_at_the_ranks():
    until = datetime.now(UTC).replace(microsecond=0)
    tid, values = _store(120, until - timedelta(hours=2), timedelta(hours=1), seed=3)
    f = Selection(since=until - timedelta(hours=3), until=until)
    ModelGroupFactory(targets=[tid])

    (row,) = leaderboard([tid], f)

    ordered = sorted(values)
    for q, field in ((0.5, "p50_ttft_ci_ms"), (0.95, "p95_ttft_ci_ms")):
        low, high = exact_ranks(120, Fraction(q).limit_denominator(100))
        assert row[field] == [ordered[low - 1], ordered[high - 1]]
    assert row["n"] == 120


@pytest.mark.django_db
def test_a_longer_window_reads_the_ranks_from_the_merged_histogram():
    until = datetime.now(UTC).replace(microsecond=0)
    tid, values = _store(300, until - timedelta(hours=20), timedelta(hours=18), seed=4)
    f = Selection(since=until - timedelta(hours=24), until=until)

    (row,) = leaderboard([tid], f)

    hist = histogram_of(values)
    for q, field in ((0.5, "p50_ttft_ci_ms"), (0.95, "p95_ttft_ci_ms")):
        low, high = exact_ranks(300, Fraction(q).limit_denominator(100))
        # The value of rank r is the percentile whose nearest rank is r: r / n exactly.
        assert row[field] == [hist.percentile(low / 300), hist.percentile(high / 300)]
    assert row["p50_ttft_ms"] == hist.percentile(0.5)
